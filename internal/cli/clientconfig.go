package cli

// The client's config file: contexts saved by `occ login`, one of them
// current, like a kubeconfig. It lives at $OCC_CLIENT_CONFIG, else
// $XDG_CONFIG_HOME/occ/config.yaml, else ~/.config/occ/config.yaml, and
// is written with mode 0600 in a directory of mode 0700 (a context may
// hold a key).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/openclaw/occ/internal/config"
)

// clientContext is one saved way to reach a server.
type clientContext struct {
	Name string `yaml:"name" json:"name"`
	URL  string `yaml:"url" json:"url"`
	// KeyFile is the absolute path of a file holding the service key.
	KeyFile string `yaml:"keyFile,omitempty" json:"keyFile,omitempty"`
	// Key is the service key itself (login --key-stdin); never printed.
	Key       string `yaml:"key,omitempty" json:"-"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
}

// clientConfig is the file's content.
type clientConfig struct {
	Current  string          `yaml:"currentContext,omitempty"`
	Contexts []clientContext `yaml:"contexts"`
}

// clientConfigPath returns where the client's config file is, "" when
// neither a variable nor a home directory says.
func clientConfigPath(getenv func(string) string) string {
	if p := getenv(config.EnvClientConfig); p != "" {
		return p
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "occ", "config.yaml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "occ", "config.yaml")
	}
	return ""
}

// loadClientConfig reads the file at path; a missing file is an empty
// config.
func loadClientConfig(path string) (*clientConfig, error) {
	cfg := &clientConfig{}
	if path == "" {
		return cfg, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(raw, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// save writes the file atomically: 0600, in a 0700 directory.
func (c *clientConfig) save(path string) error {
	if path == "" {
		return errors.New("no place for the client config: set OCC_CLIENT_CONFIG or HOME")
	}
	raw, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".config.*.tmp") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// find returns the context named name, or nil.
func (c *clientConfig) find(name string) *clientContext {
	for i := range c.Contexts {
		if c.Contexts[i].Name == name {
			return &c.Contexts[i]
		}
	}
	return nil
}

// put adds or replaces a context.
func (c *clientConfig) put(ctx clientContext) {
	if old := c.find(ctx.Name); old != nil {
		*old = ctx
		return
	}
	c.Contexts = append(c.Contexts, ctx)
}

// remove deletes a context (and clears current when it was); it reports
// whether there was one.
func (c *clientConfig) remove(name string) bool {
	for i := range c.Contexts {
		if c.Contexts[i].Name == name {
			c.Contexts = append(c.Contexts[:i], c.Contexts[i+1:]...)
			if c.Current == name {
				c.Current = ""
			}
			return true
		}
	}
	return false
}

// active returns the context a command uses: name (--context or
// OCC_CONTEXT) when given, which must exist, else the current one, else
// nil.
func (c *clientConfig) active(name string) (*clientContext, error) {
	if name != "" {
		if ctx := c.find(name); ctx != nil {
			return ctx, nil
		}
		return nil, notFound(fmt.Sprintf("No context named %q; see occ context list.", name))
	}
	if c.Current == "" {
		return nil, nil
	}
	return c.find(c.Current), nil
}
