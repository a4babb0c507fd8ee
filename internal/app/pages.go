package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Page bounds (CONTRACT.md §1).
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// PageRequest asks for one page of a list.
type PageRequest struct {
	Size  int    // 0 = default
	Token string // opaque; "" = first page
}

// Page is one page of a list and the token of the next, if any.
type Page[T any] struct {
	Items []T
	Next  string
}

// cursorOf decodes a page token: unpadded base64url of "<ms>|<id>", where
// ms is a decimal int64 and id a list item's ID (cursorID). Anything else is
// 400 INVALID_REQUEST at /pageToken, before any query: a token is caller
// input, and PostgreSQL refuses text holding NUL or invalid UTF-8.
func cursorOf(token string) (store.Cursor, error) {
	if token == "" {
		return store.Cursor{}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return store.Cursor{}, badToken()
	}
	ms, id, ok := strings.Cut(string(raw), "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !cursorID(id) {
		return store.Cursor{}, badToken()
	}
	return store.Cursor{CreatedAt: n, ID: id}, nil
}

// cursorID reports whether id can be a listed item's ID: 1 to 100 ASCII
// letters, digits, '_' and '-' (typed IDs such as ns_<uuid>, Backend IDs).
func cursorID(id string) bool {
	if id == "" || len(id) > 100 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func badToken() error {
	return occ.Invalid("The page token is not valid.", occ.Detail{Path: "/pageToken", Code: occ.DetailInvalidValue})
}

// tokenOf encodes the position after an item.
func tokenOf(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d|%s", occ.Millis(t), id)))
}

// paginate reads batches after the cursor, keeps the items visible to the
// caller, and stops at a full page: filtering happens before paging, so a
// page is never short because of hidden items and never reveals them.
func paginate[T any](ctx context.Context, req PageRequest, fetch func(ctx context.Context, after store.Cursor, limit int) ([]T, error),
	pos func(T) (time.Time, string), visible func(T) bool) (Page[T], error) {
	size := req.Size
	if size <= 0 {
		size = DefaultPageSize
	}
	if size > MaxPageSize {
		return Page[T]{}, occ.Invalid("The page size is out of range.", occ.Detail{Path: "/pageSize", Code: occ.DetailInvalidValue})
	}
	after, err := cursorOf(req.Token)
	if err != nil {
		return Page[T]{}, err
	}
	var out Page[T]
	batch := size + 1
	for {
		rows, err := fetch(ctx, after, batch)
		if err != nil {
			return Page[T]{}, notFoundOr(err)
		}
		for _, r := range rows {
			if !visible(r) {
				continue
			}
			if len(out.Items) == size {
				t, id := pos(out.Items[size-1])
				out.Next = tokenOf(t, id)
				return out, nil
			}
			out.Items = append(out.Items, r)
		}
		if len(rows) < batch {
			return out, nil
		}
		t, id := pos(rows[len(rows)-1])
		after = store.After(t, id)
	}
}

// readable pages through one kind's items with paginate, keeping those the
// caller may read exactly (the one place a list decides visibility), and
// decodes the kept rows.
func readable[R, T any](ctx context.Context, a *App, c occ.Caller, kind occ.Kind, req PageRequest,
	fetch func(ctx context.Context, after store.Cursor, limit int) ([]R, error),
	pos func(R) (time.Time, string), ref func(R) occ.ResourceRef, decode func(R) T) (Page[T], error) {
	m, err := a.authz.Filter(ctx, c, occ.P(kind, occ.ActionRead))
	if err != nil {
		return Page[T]{}, err
	}
	rows, err := paginate(ctx, req, fetch, pos, func(r R) bool { return m.Allows(ref(r)) })
	out := Page[T]{Next: rows.Next}
	for _, r := range rows.Items {
		out.Items = append(out.Items, decode(r))
	}
	return out, err
}

// same is the decode of items listed as they are stored.
func same[T any](t T) T { return t }

// rowPos is the position of a stored row (created at, ID).
func rowPos(createdAt int64, id string) (time.Time, string) { return occ.FromMillis(createdAt), id }
