package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// idempotency replays the first response to a repeated Idempotency-Key on
// operations marked x-occ-idempotent, and refuses the header on any other
// POST (ignoring it would let a client's retry create twice). It runs
// after Body, so the body is buffered and valid.
type idempotency struct {
	app *app.App
	log *slog.Logger
}

func (m idempotency) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		rt := contract.RouteFrom(r.Context())
		if key != "" && rt != nil && rt.Operation.Extensions["x-occ-idempotent"] != true && r.Method == http.MethodPost {
			contract.WriteError(w, r, occ.Invalid(occ.MsgIdempotencyUnsupported,
				occ.Detail{Path: "/Idempotency-Key", Code: occ.DetailInvalidValue}))
			return
		}
		if key == "" || rt == nil || rt.Operation.Extensions["x-occ-idempotent"] != true {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > 255 || !printableASCII(key) || len(r.Header.Values("Idempotency-Key")) != 1 {
			contract.WriteError(w, r, occ.Invalid("The Idempotency-Key must be 1-255 printable ASCII characters.",
				occ.Detail{Path: "/Idempotency-Key", Code: occ.DetailInvalidValue}))
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		c := callerFrom(r.Context())
		claim, replay, err := m.app.BeginIdempotent(r.Context(), c, key, rt.OperationID, r.URL.Path, body)
		if err != nil {
			contract.WriteError(w, r, err)
			return
		}
		if replay != nil {
			writeReplay(w, r, replay)
			return
		}
		defer claim.Release()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(claim.Context(r.Context())))
		if err := claim.Finish(context.WithoutCancel(r.Context()), rec.status, rec.body.String()); err != nil {
			m.log.Error("store idempotent response", "requestId", contract.RequestID(r.Context()), "error", err)
		}
	})
}

// writeReplay answers with the stored response under this request's ID.
func writeReplay(w http.ResponseWriter, r *http.Request, rp *app.Replay) {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(rp.Body), &env); err != nil {
		contract.WriteError(w, r, occ.Wrap(occ.CodeInternal, occ.MsgInternal, err))
		return
	}
	w.Header().Set("Idempotent-Replayed", "true")
	contract.WriteData(w, r, rp.Status, env.Data, nil)
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// recorder passes a response through while keeping a copy.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
