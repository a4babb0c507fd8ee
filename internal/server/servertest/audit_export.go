package servertest

import (
	"io"
	"net/http"
)

// export calls GET /audit-events/export with key and the query and
// returns the status, content type and body.
func (e *Env) Export(key, query string) (int, string, []byte) {
	e.T.Helper()
	req, err := http.NewRequest("GET", e.Base+"/audit-events/export"+query, nil)
	if err != nil {
		e.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := e.Client.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		e.T.Fatalf("export body: %v", err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), body
}
