package httpapi

import (
	"context"
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/occ"
)

func toSecret(s occ.Secret) gen.Secret {
	return gen.Secret{Id: s.ID, NamespaceId: s.NamespaceID, Name: s.Name, Version: s.Version,
		CreatedAt: occ.FormatTime(s.CreatedAt), UpdatedAt: occ.FormatTime(s.UpdatedAt), Etag: etag(s.Version)}
}

// secretValue turns the value's JSON string token into the bytes the
// caller meant, keeping what encoding/json would silently repair: an
// unpaired surrogate escape (\udc00) becomes its 3-byte generalised UTF-8
// form, which is not valid UTF-8, so the use case refuses it instead of
// storing U+FFFD. The error never quotes the value.
func secretValue(raw json.RawMessage) ([]byte, error) {
	v, ok := unquoteJSON(raw)
	if !ok {
		return nil, occ.Invalid("The value must be a JSON string.", occ.Detail{Path: "/value", Code: occ.DetailInvalidType})
	}
	return v, nil
}

// unquoteJSON decodes one JSON string literal byte for byte (the body has
// already passed the wire checks: valid UTF-8, valid JSON).
func unquoteJSON(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return nil, false
		}
		switch s[i+1] {
		case '"', '\\', '/':
			out = append(out, s[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return nil, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r < 0xdc00 && len(s) >= i+6 && s[i] == '\\' && s[i+1] == 'u' {
					if lo, ok := hex4(s[i+2:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
						out = utf8.AppendRune(out, utf16.DecodeRune(r, lo))
						i += 6
						continue
					}
				}
				// An unpaired surrogate: encode it as is (invalid UTF-8).
				out = append(out, 0xe0|byte(r>>12), 0x80|byte(r>>6)&0x3f, 0x80|byte(r)&0x3f)
				continue
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return out, true
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[:4]), 16, 32)
	return rune(n), err == nil
}

func (h *handlers) ListSecrets(ctx context.Context, r gen.ListSecretsRequestObject) (gen.ListSecretsResponseObject, error) {
	p, err := h.app.ListSecrets(ctx, callerFrom(ctx), r.NamespaceId, page(r.Params.PageSize, r.Params.PageToken))
	if err != nil {
		return nil, err
	}
	return gen.ListSecrets200JSONResponse{Data: mapItems(p.Items, toSecret), Meta: listMeta(ctx, p.Next)}, nil
}

func (h *handlers) CreateSecret(ctx context.Context, r gen.CreateSecretRequestObject) (gen.CreateSecretResponseObject, error) {
	value, err := secretValue(r.Body.Value)
	if err != nil {
		return nil, err
	}
	s, err := h.app.CreateSecret(ctx, callerFrom(ctx), r.NamespaceId, r.Body.Name, value)
	clear(value)
	if err != nil {
		return nil, err
	}
	tag := etag(s.Version)
	return gen.CreateSecret201JSONResponse{Body: gen.SecretEnvelope{Data: toSecret(s), Meta: meta(ctx)},
		Headers: gen.CreateSecret201ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) GetSecret(ctx context.Context, r gen.GetSecretRequestObject) (gen.GetSecretResponseObject, error) {
	s, err := h.app.GetSecret(ctx, callerFrom(ctx), r.NamespaceId, r.SecretId)
	if err != nil {
		return nil, err
	}
	tag := etag(s.Version)
	return gen.GetSecret200JSONResponse{Body: gen.SecretEnvelope{Data: toSecret(s), Meta: meta(ctx)},
		Headers: gen.GetSecret200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) UpdateSecret(ctx context.Context, r gen.UpdateSecretRequestObject) (gen.UpdateSecretResponseObject, error) {
	value, err := secretValue(r.Body.Value)
	if err != nil {
		return nil, err
	}
	s, err := h.app.UpdateSecret(ctx, callerFrom(ctx), r.NamespaceId, r.SecretId, value, ifMatch(r.Params.IfMatch))
	clear(value)
	if err != nil {
		return nil, err
	}
	tag := etag(s.Version)
	return gen.UpdateSecret200JSONResponse{Body: gen.SecretEnvelope{Data: toSecret(s), Meta: meta(ctx)},
		Headers: gen.UpdateSecret200ResponseHeaders{ETag: &tag}}, nil
}

func (h *handlers) DeleteSecret(ctx context.Context, r gen.DeleteSecretRequestObject) (gen.DeleteSecretResponseObject, error) {
	if err := h.app.DeleteSecret(ctx, callerFrom(ctx), r.NamespaceId, r.SecretId, ifMatch(r.Params.IfMatch)); err != nil {
		return nil, err
	}
	return gen.DeleteSecret204Response{}, nil
}
