package servertest

import (
	"net/url"
)

// doKeyed is do with an Idempotency-Key ("" : none).
func (p *OccProc) DoKeyed(method, path string, body any, idemKey string) (Resp, error) {
	return p.doHeader(method, path, body, "Idempotency-Key", idemKey)
}

func (p *OccProc) MustKeyed(method, path string, body any, key string) Resp {
	p.T.Helper()
	r, err := p.DoKeyed(method, path, body, key)
	if err != nil {
		p.T.Fatalf("%s %s: %v\n%s", method, path, err, ReadTail(p.Logs))
	}
	return r
}

// listAll reads every page of a collection.
func (p *OccProc) ListAll(coll string) []map[string]any {
	p.T.Helper()
	var out []map[string]any
	path := coll + "?pageSize=1000"
	for {
		r := p.Must("GET", path, nil)
		if r.Status != 200 {
			p.T.Fatalf("GET %s = %d %v", path, r.Status, r.Body)
		}
		for _, it := range r.List() {
			out = append(out, it.(map[string]any))
		}
		next, _ := Dig(r.Body, "meta", "nextPageToken").(string)
		if next == "" {
			return out
		}
		path = coll + "?pageSize=1000&pageToken=" + url.QueryEscape(next)
	}
}
