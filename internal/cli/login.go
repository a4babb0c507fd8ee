package cli

// `occ login` and `occ context list|use|delete|current`: saved contexts in
// the client config (clientconfig.go). A key is never printed.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/config"
)

// loginOptions are the inputs of `occ login`.
type loginOptions struct {
	IO        ioStreams
	getenv    func(string) string
	URL       string
	KeyFile   string
	KeyStdin  bool
	Namespace string
	Context   string
}

func loginCmd(streams ioStreams, getenv func(string) string) *cobra.Command {
	opts := &loginOptions{IO: streams, getenv: getenv}
	cmd := &cobra.Command{
		Use:   "login --url URL (--key-file FILE | --key-stdin) [--namespace NS] [--context NAME]",
		Short: "Check a service key against a server and save it as the current context",
		Long: `Check a service key against the server at --url, then save a context (the
URL, the key file's absolute path or, with --key-stdin, the key itself, and a
default Namespace) in the client config and make it current. Later commands
use it when no flag or variable says otherwise (flag > variable > context >
default).

The client config is $OCC_CLIENT_CONFIG, else $XDG_CONFIG_HOME/occ/config.yaml,
else ~/.config/occ/config.yaml, written with mode 0600. The context's name is
--context, else the URL's host and port. Without flags, OCC_URL, OCC_KEY_FILE,
OCC_KEY and OCC_NAMESPACE are used. The key is never printed.`,
		Example: `  occ login --url http://127.0.0.1:8080 --key-file ./occ-data/bootstrap-admin.key
  occ login --url https://occ.example.com --key-file ~/prod.key --namespace team --context prod
  pass show occ/prod | occ login --url https://occ.example.com --key-stdin --context prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLogin(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.URL, "url", "", "the server's URL (OCC_URL)")
	cmd.Flags().StringVar(&opts.KeyFile, "key-file", "", "file holding the service key; its absolute path is saved (OCC_KEY_FILE)")
	cmd.Flags().BoolVar(&opts.KeyStdin, "key-stdin", false, "read the key from standard input and save the key itself")
	cmd.Flags().StringVarP(&opts.Namespace, "namespace", "n", "", "default Namespace of the context (checked; OCC_NAMESPACE)")
	cmd.Flags().StringVar(&opts.Context, "context", "", "the context's name (default: the URL's host:port)")
	cmd.MarkFlagsMutuallyExclusive("key-file", "key-stdin")
	return cmd
}

// or returns v, else the variable env.
func (o *loginOptions) or(v, env string) string {
	if v != "" {
		return v
	}
	return o.getenv(env)
}

func runLogin(ctx context.Context, opts *loginOptions) error {
	saved := clientContext{URL: strings.TrimRight(opts.or(opts.URL, config.EnvURL), "/"), Namespace: opts.or(opts.Namespace, config.EnvNamespace)}
	if saved.URL == "" {
		return usageError{errors.New("--url is required (or OCC_URL)")}
	}
	u, err := url.Parse(saved.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url %q is not an http:// or https:// URL", saved.URL)
	}
	var key string
	switch keyFile := opts.or(opts.KeyFile, config.EnvKeyFile); {
	case opts.KeyStdin:
		raw, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return err
		}
		if key = strings.TrimSpace(string(raw)); key == "" {
			return errors.New("no key on standard input")
		}
		saved.Key = key
	case keyFile != "":
		if saved.KeyFile, err = filepath.Abs(keyFile); err != nil {
			return err
		}
		if key, err = readKey(saved.KeyFile); err != nil {
			return err
		}
	case opts.getenv(config.EnvKey) != "":
		key = opts.getenv(config.EnvKey)
		saved.Key = key
	default:
		return usageError{errors.New("give --key-file FILE or --key-stdin (or OCC_KEY_FILE, OCC_KEY)")}
	}
	saved.Name = opts.Context
	if saved.Name == "" {
		saved.Name = u.Host
	}
	// The check: an authenticated list, and the Namespace when given.
	c := client.New(saved.URL, client.WithKey(key))
	if _, _, err := c.ListNamespaces(ctx, client.Page{Size: 1}); err != nil {
		return fmt.Errorf("the server at %s did not accept the key: %w", saved.URL, plainError(err))
	}
	if saved.Namespace != "" {
		if _, err := resolveNamespace(ctx, c, saved.Namespace); err != nil {
			return err
		}
	}
	path := clientConfigPath(opts.getenv)
	cfg, err := loadClientConfig(path)
	if err != nil {
		return err
	}
	cfg.put(saved)
	cfg.Current = saved.Name
	if err := cfg.save(path); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "logged in to %s as context %q (saved in %s)\n", saved.URL, saved.Name, path)
	return nil
}

// contextCmd is `occ context list|use|delete|current`.
func contextCmd(streams ioStreams, getenv func(string) string) *cobra.Command {
	path := func() string { return clientConfigPath(getenv) }
	load := func() (*clientConfig, error) { return loadClientConfig(path()) }
	var output string
	list := &cobra.Command{
		Use: "list", Short: "List the saved contexts; * marks the current one", Args: cobra.NoArgs,
		Example: "  occ context list\n  occ context list -o json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			api := &apiOptions{IO: streams, Output: output}
			if err := api.bind(cmd); err != nil {
				return err
			}
			return printList(api, cfg.Contexts, []string{"CURRENT", "NAME", "URL", "NAMESPACE", "KEY"}, func(c *clientContext) []string {
				cur := ""
				if c.Name == cfg.Current {
					cur = "*"
				}
				key := c.KeyFile
				if c.Key != "" {
					key = "(saved in the config)"
				}
				return []string{cur, c.Name, c.URL, dash(c.Namespace), dash(key)}
			})
		},
	}
	list.Flags().StringVarP(&output, "output", "o", outputTable, outputUsage)
	use := &cobra.Command{
		Use: "use NAME", Short: "Make a saved context the current one", Args: cobra.ExactArgs(1),
		Example:           "  occ context use prod",
		ValidArgsFunction: completeContexts(getenv),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			if cfg.find(args[0]) == nil {
				return notFound(fmt.Sprintf("No context named %q; see occ context list.", args[0]))
			}
			cfg.Current = args[0]
			if err := cfg.save(path()); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "current context: %s\n", args[0])
			return nil
		},
	}
	del := &cobra.Command{
		Use: "delete NAME", Short: "Forget a saved context (its key file stays)", Args: cobra.ExactArgs(1),
		Example:           "  occ context delete old-lab",
		ValidArgsFunction: completeContexts(getenv),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			if !cfg.remove(args[0]) {
				return notFound(fmt.Sprintf("No context named %q; see occ context list.", args[0]))
			}
			if err := cfg.save(path()); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "context %s deleted\n", args[0])
			return nil
		},
	}
	current := &cobra.Command{
		Use: "current", Short: "Print the current context's name", Args: cobra.NoArgs,
		Example: "  occ context current",
		RunE: func(_ *cobra.Command, _ []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			if cfg.Current == "" {
				return notFound("No current context; run occ login or occ context use NAME.")
			}
			fmt.Fprintln(streams.Out, cfg.Current)
			return nil
		},
	}
	return groupCmd("context", "Saved contexts (server, key, default Namespace) of occ login, like kubeconfig's", list, use, del, current)
}
