// Command occ is the OpenClaw Enterprise control plane: server and CLI.
package main

import (
	"os"

	"github.com/openclaw/occ/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
