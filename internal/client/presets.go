package client

import (
	"context"
	"net/http"

	"github.com/openclaw/occ/internal/client/gen"
)

// Preset is a Namespace's reusable launch settings.
type Preset = gen.Preset

// ListPresets returns one page of the Namespace's Presets.
func (c *Client) ListPresets(ctx context.Context, ns string, p Page) ([]Preset, string, error) {
	res, err := c.api.ClientInterface.ListPresets(ctx, ns, &gen.ListPresetsParams{PageSize: p.sizeParam(), PageToken: p.tokenParam()})
	return pageOf[Preset]("list presets", res, err)
}

// ListAllPresets returns every Preset of the Namespace the caller may read.
func (c *Client) ListAllPresets(ctx context.Context, ns string) ([]Preset, error) {
	return listAll(ctx, func(ctx context.Context, p Page) ([]Preset, string, error) { return c.ListPresets(ctx, ns, p) })
}

// CreatePreset creates a Preset: body is a gen.PresetCreate or its JSON.
func (c *Client) CreatePreset(ctx context.Context, ns string, body any) (*Preset, error) {
	r, err := jsonBody("create preset", body)
	if err != nil {
		return nil, err
	}
	res, err := c.api.ClientInterface.CreatePresetWithBody(ctx, ns, &gen.CreatePresetParams{}, contentJSON, r)
	return dataOf[Preset]("create preset", http.StatusCreated, res, err)
}

// GetPreset returns a Preset.
func (c *Client) GetPreset(ctx context.Context, ns, id string) (*Preset, error) {
	res, err := c.api.ClientInterface.GetPreset(ctx, ns, id)
	return dataOf[Preset]("get preset", http.StatusOK, res, err)
}

// UpdatePreset changes a Preset: patch is a gen.PresetPatch or its JSON
// (absent keeps, null clears).
func (c *Client) UpdatePreset(ctx context.Context, ns, id string, patch any, etag string) (*Preset, error) {
	r, err := jsonBody("update preset", patch)
	if err != nil {
		return nil, err
	}
	res, err := c.api.ClientInterface.UpdatePresetWithBody(ctx, ns, id, &gen.UpdatePresetParams{IfMatch: ifMatch(etag)}, contentJSON, r)
	return dataOf[Preset]("update preset", http.StatusOK, res, err)
}

// DeletePreset deletes a Preset.
func (c *Client) DeletePreset(ctx context.Context, ns, id, etag string) error {
	res, err := c.api.ClientInterface.DeletePreset(ctx, ns, id, &gen.DeletePresetParams{IfMatch: ifMatch(etag)})
	return noContentOf("delete preset", res, err)
}
