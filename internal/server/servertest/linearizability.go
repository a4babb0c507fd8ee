package servertest

// doIfMatch is do with an If-Match header when etag is set.
func (p *OccProc) DoIfMatch(method, path string, body any, etag string) (Resp, error) {
	if etag == "" {
		return p.do(method, path, body)
	}
	return p.doHeader(method, path, body, "If-Match", etag)
}
