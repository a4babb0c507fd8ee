package cli

// The exit codes of every occ command, decided here and nowhere else (the
// README's "Exit codes" lists them).

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// Exit codes.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitError: any other failure (an API error, a refused input, a
	// network failure, a timeout).
	ExitError = 1
	// ExitUsage: an unknown command or flag, a missing required flag or a
	// wrong number of arguments; nothing was sent.
	ExitUsage = 2
	// ExitNotFound: the server answered 404 NOT_FOUND, or no resource has
	// the name given.
	ExitNotFound = 3
	// ExitDeploymentFailed: `deploy --wait` or `deployments watch` saw the
	// deployment end failed.
	ExitDeploymentFailed = 4
)

// usageError is a command line the command cannot run: an unknown command
// or flag, a missing flag, the wrong number of arguments.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// notFoundError is a local lookup that found nothing (a context).
type notFoundError struct{ msg string }

func (e notFoundError) Error() string { return e.msg }

// notFound returns a not-found error with the message.
func notFound(msg string) error { return notFoundError{msg} }

// exitCode returns the exit code of a command's error.
func exitCode(err error) int {
	var ue usageError
	var de *client.DeploymentError
	var nf notFoundError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue), isCobraUsage(err):
		return ExitUsage
	case client.IsNotFound(err), errors.As(err, &nf):
		return ExitNotFound
	case errors.As(err, &de):
		return ExitDeploymentFailed
	}
	return ExitError
}

// isCobraUsage recognises the usage errors cobra makes without a hook:
// unknown subcommands of the root and missing required flags.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command ") || strings.HasPrefix(s, "required flag(s) ")
}

// asUsage wraps the argument checks and flag errors of every command
// under root as usage errors, and makes a command group refuse an unknown
// subcommand (cobra would print its help and succeed).
func asUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Runnable() {
			c.Args = cobra.ArbitraryArgs
			c.RunE = runGroup
			c.Annotations = map[string]string{groupAnnotation: "true"}
		}
		if check := c.Args; check != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := check(cmd, args); err != nil {
					return usageError{err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// groupAnnotation marks a command group (a noun holding verbs).
const groupAnnotation = "occ/group"

// runGroup runs a command group: its help, or an unknown subcommand's
// usage error.
func runGroup(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
	}
	return cmd.Help()
}

// runRoot executes root, prints an error as "occ: …" (a usage error with
// the way to the command's help) and returns the exit code.
func runRoot(root *cobra.Command, stderr io.Writer) int {
	asUsage(root)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "occ:", err)
	code := exitCode(err)
	if code == ExitUsage {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}
