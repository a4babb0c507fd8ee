package servertest

import (
	"encoding/json"
)

func RawBody(r Resp) string {
	b, _ := json.Marshal(r.Body)
	return string(b)
}
