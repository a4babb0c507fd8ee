package docker

import (
	"slices"
	"strings"
	"testing"
)

// TestLoadAnswer: the references Docker and Podman name in their load
// streams, and a failure midway is an error with the engine's text.
func TestLoadAnswer(t *testing.T) {
	for _, c := range []struct {
		stream string
		want   []string
		err    string
	}{
		{`{"stream":"Loaded image: openclaw-gateway:1\n"}`, []string{"openclaw-gateway:1"}, ""},
		{`{"stream":"Loaded image ID: sha256:abc\n"}`, []string{"sha256:abc"}, ""},
		{`{"stream":"Loaded image(s): localhost/a:1,docker.io/library/b:2\n"}`, []string{"localhost/a:1", "docker.io/library/b:2"}, ""},
		{`{"stream":"unpacking\n"}{"errorDetail":{"message":"no space"},"error":"no space"}`, nil, "the engine failed: no space"},
		{`{"stream":`, nil, "read the answer"},
	} {
		got, err := loadAnswer(strings.NewReader(c.stream))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error containing %q", c.stream, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q %v, want %q", c.stream, got, err, c.want)
		}
	}
}
