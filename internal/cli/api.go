package cli

// The client commands (`occ namespaces|agents|deployments|configurations|
// iam|secrets|presets|… `) talk to a running occ over its HTTP API through
// internal/client. Each command has a run function, tested against an
// httptest fake with captured output (GitHub CLI's pattern); this file
// holds what they share: the global flags and where their values come from
// (flag, variable, context, default), the client, Namespace and name
// resolution, and tables. output.go holds the -o formats, exit.go the exit
// codes, verbs.go and noun.go the building blocks of the verbs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/config"
)

// Defaults of the client commands' global flags.
const (
	defaultURL       = "http://127.0.0.1:8080"
	defaultKeyFile   = "./occ-data/bootstrap-admin.key"
	defaultNamespace = "default"
)

// ioStreams are where a client command reads and writes.
type ioStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// apiOptions are the global flags every client command has, and how it
// reaches the server. Each setting comes from its flag, else its
// environment variable, else the context (--context, OCC_CONTEXT, else
// the client config's current one), else the built-in default.
type apiOptions struct {
	IO ioStreams
	// URL is the server's base URL (--url, OCC_URL).
	URL string
	// KeyFile holds the service key (--key-file, OCC_KEY_FILE); read
	// when Key is "".
	KeyFile string
	// Key is the service key itself (OCC_KEY, or a context's).
	Key string
	// Namespace is a Namespace ID (ns_…) or name (--namespace, -n,
	// OCC_NAMESPACE).
	Namespace string
	// Output is the output format (--output, -o; output.go).
	Output string
	// Context names the client config's context to use (--context,
	// OCC_CONTEXT).
	Context string
	// HTTPClient, when set, sends the requests (tests).
	HTTPClient *http.Client
	getenv     func(string) string
}

// newAPIOptions returns the global options before parsing (the built-in
// defaults); bind settles them.
func newAPIOptions(streams ioStreams, getenv func(string) string) *apiOptions {
	return &apiOptions{IO: streams, URL: defaultURL, KeyFile: defaultKeyFile, Namespace: defaultNamespace, Output: outputTable, getenv: getenv}
}

// register adds the global flags to fs.
func (o *apiOptions) register(fs interface {
	StringVar(p *string, name, value, usage string)
	StringVarP(p *string, name, shorthand, value, usage string)
}) {
	fs.StringVar(&o.URL, "url", o.URL, "occ server URL (OCC_URL, else the context's)")
	fs.StringVar(&o.KeyFile, "key-file", o.KeyFile, "file holding the service key (OCC_KEY_FILE; OCC_KEY gives the key itself; else the context's)")
	fs.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "Namespace ID or name (OCC_NAMESPACE, else the context's)")
	fs.StringVarP(&o.Output, "output", "o", o.Output, outputUsage)
	fs.StringVar(&o.Context, "context", "", "the client config's context to use (OCC_CONTEXT; default: the current one, see occ context)")
}

// bind settles the global options: flag, else environment variable, else
// context, else default. Call it first in every RunE.
func (o *apiOptions) bind(cmd *cobra.Command) error {
	if _, err := parseOutput(o.Output); err != nil {
		return err
	}
	if o.getenv == nil {
		return nil // made by a test with its fields set
	}
	set := func(flag string) bool { f := cmd.Flags().Lookup(flag); return f != nil && f.Changed }
	if !set("context") {
		o.Context = o.getenv(config.EnvContext)
	}
	cfg, err := loadClientConfig(clientConfigPath(o.getenv))
	if err != nil {
		return err
	}
	ctx, err := cfg.active(o.Context)
	if err != nil {
		return err
	}
	// A URL given by flag or variable for another server leaves the
	// context out: its key is never sent to a server it was not saved for.
	url := o.URL
	if set("url") || o.getenv(config.EnvURL) != "" {
		if !set("url") {
			url = o.getenv(config.EnvURL)
		}
		if ctx != nil && strings.TrimRight(url, "/") != ctx.URL {
			ctx = nil
		}
	}
	if ctx == nil {
		ctx = &clientContext{}
	}
	pick := func(flag, env, fromCtx string, dst *string) {
		switch {
		case set(flag):
		case o.getenv(env) != "":
			*dst = o.getenv(env)
		case fromCtx != "":
			*dst = fromCtx
		}
	}
	pick("url", config.EnvURL, ctx.URL, &o.URL)
	pick("namespace", config.EnvNamespace, ctx.Namespace, &o.Namespace)
	// The key: --key-file, OCC_KEY, OCC_KEY_FILE, the context's key or
	// key file, the default key file.
	o.Key = ""
	switch {
	case set("key-file"):
	case o.getenv(config.EnvKey) != "":
		o.Key = o.getenv(config.EnvKey)
	case o.getenv(config.EnvKeyFile) != "":
		o.KeyFile = o.getenv(config.EnvKeyFile)
	case ctx.Key != "":
		o.Key = ctx.Key
	case ctx.KeyFile != "":
		o.KeyFile = ctx.KeyFile
	}
	return nil
}

// readKey returns the service key held in a file.
func readKey(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no service key: set OCC_KEY or --key-file, or occ login (%w)", err)
	}
	key := strings.TrimSpace(string(raw))
	if key == "" {
		return "", fmt.Errorf("no service key: %s is empty", path)
	}
	return key, nil
}

// client returns a client of the server, authenticated with the key bind
// settled on.
func (o *apiOptions) client() (*client.Client, error) {
	key := o.Key
	if key == "" {
		var err error
		if key, err = readKey(o.KeyFile); err != nil {
			return nil, err
		}
	}
	opts := []client.Option{client.WithKey(key)}
	if o.HTTPClient != nil {
		opts = append(opts, client.WithHTTPClient(o.HTTPClient))
	}
	return client.New(o.URL, opts...), nil
}

// namespaceID resolves --namespace: an ID as is, a name by listing.
func (o *apiOptions) namespaceID(ctx context.Context, c *client.Client) (string, error) {
	return resolveNamespace(ctx, c, o.Namespace)
}

// resolveNamespace returns the ID of the Namespace ref names (an ns_ ID or
// a name).
func resolveNamespace(ctx context.Context, c *client.Client, ref string) (string, error) {
	if strings.HasPrefix(ref, "ns_") {
		return ref, nil
	}
	ns, err := c.NamespaceByName(ctx, ref)
	if err != nil {
		return "", err
	}
	return ns.Id, nil
}

// resolveByName returns ref when it has the resource's ID prefix, else the
// ID of the one item list finds with that name.
func resolveByName[T any](ctx context.Context, ref, prefix, kind string, list func(context.Context) ([]T, error), nameID func(T) (string, string)) (string, error) {
	if strings.HasPrefix(ref, prefix) {
		return ref, nil
	}
	items, err := list(ctx)
	if err != nil {
		return "", err
	}
	var found []string
	for _, it := range items {
		if name, id := nameID(it); name == ref {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return "", &client.APIError{Status: 404, Code: client.CodeNotFound, Message: fmt.Sprintf("No %s named %q.", kind, ref)}
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("%d %ss are named %q; give an ID", len(found), kind, ref)
	}
}

// printTable writes rows under a header, in aligned columns.
func (o *apiOptions) printTable(header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// printFields writes one object as "field:  value" lines; empty values
// print as "-".
func (o *apiOptions) printFields(fields [][2]string) error {
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], dash(f[1]))
	}
	return tw.Flush()
}

// dash returns s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// run wraps a command's run function: it binds the global flags, stops on
// an interrupt, and returns API errors bare so that they print as
// `occ: CODE: message (request req_…)`.
func run(api *apiOptions, fn func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := api.bind(cmd); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
		defer stop()
		return plainError(fn(ctx, args))
	}
}

// plainError returns the *client.APIError or *client.DeploymentError
// inside err when there is one (their messages carry the code and request
// or deployment ID), else err.
func plainError(err error) error {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return ae
	}
	var de *client.DeploymentError
	if errors.As(err, &de) {
		return de
	}
	return err
}

// addClientCommands adds the client commands to root: the nouns (each
// with the global flags and completion), login, context and completion,
// and the Secret verbs under the existing secrets command (made when root
// has none). Settings are read through getenv.
func addClientCommands(root *cobra.Command, streams ioStreams, getenv func(string) string) {
	for _, noun := range []func(*apiOptions) *cobra.Command{namespacesCmd, agentsCmd, deploymentsCmd, configurationsCmd, iamCmd, auditCmd,
		presetsCmd, serviceAccountsCmd, credentialSourcesCmd, serviceKeysCmd, workspaceCmd} {
		api := newAPIOptions(streams, getenv)
		cmd := noun(api)
		api.register(cmd.PersistentFlags())
		addCompletions(cmd, api)
		root.AddCommand(cmd)
	}
	root.AddCommand(loginCmd(streams, getenv), contextCmd(streams, getenv), completionCmd(root, streams.Out))
	root.CompletionOptions.DisableDefaultCmd = true
	var group *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "secrets" {
			group = c
		}
	}
	if group == nil {
		group = &cobra.Command{Use: "secrets", Short: "Secrets"}
		root.AddCommand(group)
	}
	for _, verb := range []func(*apiOptions) *cobra.Command{secretsCreateCmd, secretsListCmd, secretsGetCmd, secretsUpdateCmd, secretsDeleteCmd} {
		api := newAPIOptions(streams, getenv)
		cmd := verb(api)
		api.register(cmd.Flags())
		addCompletions(cmd, api)
		group.AddCommand(cmd)
	}
}

// withTimeout bounds ctx by d; 0 leaves it unbounded.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
