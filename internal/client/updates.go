package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// Updates of the resources created elsewhere in this package. etag, when
// not "", is sent as If-Match: a change made meanwhile is then 412
// PRECONDITION_FAILED instead of being merged.

// CodePreconditionFailed is the answer to an If-Match that no longer holds.
const CodePreconditionFailed = "PRECONDITION_FAILED"

// UpdateSecret replaces a Secret's value (version + 1). The value is sent
// once and never logged.
func (c *Client) UpdateSecret(ctx context.Context, ns, id, value, etag string) (*Secret, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, requestError("update secret", err)
	}
	res, err := c.api.ClientInterface.UpdateSecret(ctx, ns, id, &gen.UpdateSecretParams{IfMatch: ifMatch(etag)}, gen.SecretPatch{Value: raw})
	return dataOf[Secret]("update secret", http.StatusOK, res, err)
}

// UpdateConfiguration merge-patches a Configuration (RFC 7386): patch is a
// ConfigurationPatch or its JSON.
func (c *Client) UpdateConfiguration(ctx context.Context, ns, id string, patch any, etag string) (*Configuration, error) {
	body, err := jsonBody("update configuration", patch)
	if err != nil {
		return nil, err
	}
	res, err := c.api.ClientInterface.UpdateConfigurationWithBody(ctx, ns, id, &gen.UpdateConfigurationParams{IfMatch: ifMatch(etag)}, contentJSON, body)
	return dataOf[Configuration]("update configuration", http.StatusOK, res, err)
}

// RenameNamespace renames a Namespace.
func (c *Client) RenameNamespace(ctx context.Context, id, name, etag string) (*Namespace, error) {
	res, err := c.api.ClientInterface.UpdateNamespace(ctx, id, &gen.UpdateNamespaceParams{IfMatch: ifMatch(etag)}, gen.NamespacePatch{Name: name})
	return dataOf[Namespace]("rename namespace", http.StatusOK, res, err)
}
