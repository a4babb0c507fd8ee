package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// The helpers of the methods written on the generated client's plain
// calls (gen.ClientInterface, which answer *http.Response): read the
// {data, meta} envelope of the status wanted, or return the error answer
// as an *APIError.

// readAnswer reads a response's body; a failed call or read is an error
// naming what.
func readAnswer(what string, res *http.Response, err error) ([]byte, error) {
	if err != nil {
		return nil, requestError(what, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, requestError(what, err)
	}
	return body, nil
}

// dataOf returns the data of a want answer.
func dataOf[T any](what string, want int, res *http.Response, err error) (*T, error) {
	body, err := readAnswer(what, res, err)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != want {
		return nil, unexpected(res, body)
	}
	var env struct {
		Data *T `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Data == nil {
		return nil, unexpected(&http.Response{StatusCode: 200, Header: res.Header}, body)
	}
	return env.Data, nil
}

// pageOf returns a 200 list answer's items and next page token.
func pageOf[T any](what string, res *http.Response, err error) ([]T, string, error) {
	body, err := readAnswer(what, res, err)
	if err != nil {
		return nil, "", err
	}
	if res.StatusCode != http.StatusOK {
		return nil, "", unexpected(res, body)
	}
	var list struct {
		Data []T          `json:"data"`
		Meta gen.ListMeta `json:"meta"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, "", unexpected(&http.Response{StatusCode: 200, Header: res.Header}, body)
	}
	return list.Data, nextToken(list.Meta), nil
}

// noContentOf checks a 204 answer.
func noContentOf(what string, res *http.Response, err error) error {
	body, err := readAnswer(what, res, err)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusNoContent {
		return unexpected(res, body)
	}
	return nil
}

// jsonBody marshals a request body (a typed body, or json.RawMessage for a
// JSON Merge Patch as the caller wrote it).
func jsonBody(what string, v any) (io.Reader, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return bytes.NewReader(raw), nil
}

// contentJSON is the content type of request bodies.
const contentJSON = "application/json"
