package servertest

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"

	"github.com/openclaw/occ/internal/httpapi/contracttest"
)

// signInFrom signs in from a loopback source address, from any goroutine.
func (e *Env) SignInFrom(sourceIP, email, password string) Resp {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(sourceIP)}}
	client := &http.Client{Transport: contracttest.NewValidatingTransport(e.T, e.Spec, &http.Transport{DialContext: dialer.DialContext})}
	raw, _ := json.Marshal(map[string]any{"email": email, "password": password})
	res, err := client.Post(e.Base+"/api/auth/sign-in", "application/json", bytes.NewReader(raw))
	if err != nil {
		e.T.Errorf("sign in from %s: %v", sourceIP, err)
		return Resp{}
	}
	defer res.Body.Close()
	out := Resp{Status: res.StatusCode, Header: res.Header}
	_ = json.NewDecoder(res.Body).Decode(&out.Body)
	return out
}
