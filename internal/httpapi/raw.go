package httpapi

import (
	"net/http"
)

// rawJSON is a pre-encoded JSON document response (the OpenAPI document).
type rawJSON []byte

// VisitGetOpenAPIResponse implements gen.GetOpenAPIResponseObject.
func (b rawJSON) VisitGetOpenAPIResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}
