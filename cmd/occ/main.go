// Command occ is the OpenClaw Enterprise control plane: server and CLI.
package main

import (
	"os"

	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/server"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr,
		cli.Server{Serve: server.Serve, Migrate: server.Migrate, RotateSecretsKey: server.RotateSecretsKey,
			InstallRuntime: server.InstallRuntime, BuildImage: server.BuildImage,
			ImportSecretsKeyset: server.ImportSecretsKeyset, CreateSecretsKeyset: server.CreateSecretsKeyset, Version: server.Version}))
}
