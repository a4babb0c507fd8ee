// Package api embeds the HTTP contract of occ, api/openapi.yaml, so the server
// can serve it and validate requests against it.
package api

import _ "embed"

// OpenAPIYAML is the OpenAPI 3 document of the occ HTTP API.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
