package cli

// `occ workspace get|put|edit AGENT FILE`: the files of an Agent's live
// workspace (AGENTS.md, SOUL.md, IDENTITY.md, USER.md), through its
// gateway.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/client/gen"
)

// workspaceFiles are the names a workspace file may have.
var workspaceFiles = []string{string(gen.AGENTSMd), string(gen.SOULMd), string(gen.IDENTITYMd), string(gen.USERMd)}

// completeWorkspace completes AGENT, then FILE.
func completeWorkspace(api *apiOptions) cobra.CompletionFunc {
	agents := completeNames(api, (*client.Client).ListAllAgents, func(a *client.Agent) (string, string) { return a.Name, a.Id })
	return func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return agents(cmd, args, prefix)
		case 1:
			return workspaceFiles, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// printWorkspaceFile writes a file: its content as is, or the data.
func printWorkspaceFile(api *apiOptions, f *client.WorkspaceFile) error {
	if api.structured() {
		return api.printData(f)
	}
	_, err := fmt.Fprint(api.IO.Out, f.Content)
	return err
}

// printWritten writes what a put reports.
func printWritten(api *apiOptions, w *client.WorkspaceFileWritten) error {
	return api.printObject(w, func() [][2]string { return [][2]string{{"name", w.Name}, {"size", strconv.Itoa(w.Size)}} })
}

func workspaceCmd(api *apiOptions) *cobra.Command {
	var agent, file, from string
	get := verbCmd(api, "get AGENT FILE", "Print a file of the Agent's live workspace", func(ctx context.Context) error {
		return actOn(ctx, api, agent, resolveAgent, func(c *client.Client, ctx context.Context, ns, id string) (*client.WorkspaceFile, error) {
			return c.GetWorkspaceFile(ctx, ns, id, file)
		}, printWorkspaceFile)
	}, &agent, &file)
	get.Example = "  occ workspace get bot SOUL.md\n  occ workspace get bot AGENTS.md > AGENTS.md"
	put := verbCmd(api, "put AGENT FILE --from PATH", "Create or replace a file of the Agent's live workspace (at most 16 KiB of UTF-8)", func(ctx context.Context) error {
		raw, err := readInput(from, api.IO.In)
		if err != nil {
			return err
		}
		return actOn(ctx, api, agent, resolveAgent, func(c *client.Client, ctx context.Context, ns, id string) (*client.WorkspaceFileWritten, error) {
			return c.PutWorkspaceFile(ctx, ns, id, file, string(raw))
		}, printWritten)
	}, &agent, &file)
	put.Example = "  occ workspace put bot SOUL.md --from SOUL.md\n  echo 'You are a support assistant.' | occ workspace put bot SOUL.md --from -"
	put.Flags().StringVar(&from, "from", "", "the file to upload (- for standard input)")
	_ = put.MarkFlagRequired("from")
	edit := verbCmd(api, "edit AGENT FILE", "Edit a file of the Agent's live workspace in $EDITOR", func(ctx context.Context) error {
		c, ns, id, err := api.target(ctx, agent, resolveAgent)
		if err != nil {
			return err
		}
		f, err := c.GetWorkspaceFile(ctx, ns, id, file)
		if err != nil {
			return err
		}
		edited, s, err := api.edit("occ-workspace-*-"+file, []byte(f.Content))
		if err != nil {
			return api.finishEdit(s, err)
		}
		w, err := c.PutWorkspaceFile(ctx, ns, id, file, string(edited))
		if err := api.finishEdit(s, plainError(err)); err != nil {
			return err
		}
		return printWritten(api, w)
	}, &agent, &file)
	edit.Long = `Open a file of the Agent's live workspace in $EDITOR (vi when unset) and write
back what you save. The workspace has no version to check: a change made
through the gateway meanwhile is overwritten. An unchanged file sends
nothing; a failed write keeps your edit in a file.`
	edit.Example = "  occ workspace edit bot SOUL.md"
	for _, c := range []*cobra.Command{get, put, edit} {
		c.ValidArgsFunction = completeWorkspace(api)
	}
	return groupCmd("workspace", "Files of an Agent's live workspace: "+fmt.Sprint(workspaceFiles), get, put, edit)
}
