package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// ChannelsStatusOptions are the parameters of channels.status.
type ChannelsStatusOptions struct {
	// Probe asks the gateway to contact each channel's provider (Slack:
	// auth.test) before answering; Timeout bounds that probe on the gateway.
	Probe   bool
	Timeout time.Duration
}

// ChannelsStatus is the result of channels.status.
type ChannelsStatus struct {
	TS           int64                      `json:"ts"`
	ChannelOrder []string                   `json:"channelOrder"`
	Channels     map[string]json.RawMessage `json:"channels"`
	// ChannelAccounts holds per-account snapshots by channel.
	ChannelAccounts         map[string][]ChannelAccount `json:"channelAccounts"`
	ChannelDefaultAccountID map[string]string           `json:"channelDefaultAccountId"`
	// Payload is the whole answer.
	Payload json.RawMessage `json:"-"`
}

// ChannelAccount is one account snapshot (schema-light on the gateway: only
// the fields occ reads are here).
type ChannelAccount struct {
	AccountID          string          `json:"accountId"`
	Enabled            *bool           `json:"enabled"`
	Configured         *bool           `json:"configured"`
	Running            *bool           `json:"running"`
	Connected          *bool           `json:"connected"`
	LastError          *string         `json:"lastError"`
	HealthState        string          `json:"healthState"`
	Lifecycle          string          `json:"lifecycle"`
	TerminalDisconnect bool            `json:"terminalDisconnect"`
	BotTokenSource     string          `json:"botTokenSource"`
	AppTokenSource     string          `json:"appTokenSource"`
	Probe              json.RawMessage `json:"probe"`
}

// ChannelsStatus calls channels.status (operator.read).
func (c *Conn) ChannelsStatus(ctx context.Context, o ChannelsStatusOptions) (ChannelsStatus, error) {
	const op = "channels.status"
	params := map[string]any{}
	if o.Probe {
		params["probe"] = true
		if o.Timeout > 0 {
			params["timeoutMs"] = o.Timeout.Milliseconds()
		}
	}
	var raw json.RawMessage
	var s ChannelsStatus
	if err := c.Call(ctx, op, params, &raw); err != nil {
		return s, err
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, &Error{Kind: ErrProtocol, Op: op, Err: err}
	}
	s.Payload = raw
	return s, nil
}

// Check states of a derived channel check (CONTRACT.md §7 diagnostics).
const (
	CheckSucceeded = "succeeded"
	CheckFailed    = "failed"
	CheckUnknown   = "unknown"
)

// SlackChecks are the three Slack checks derived from channels.status as
// reference/openclaw-runtime.md §2.5 says, without sending a message.
type SlackChecks struct {
	// Present is false when the gateway reports no Slack channel at all (the
	// plugin is not installed or the channel is not configured).
	Present bool
	// Configuration: channels.slack.configured plus the token sources.
	Configuration  string
	BotTokenSource string
	AppTokenSource string
	// Authentication: probe.ok, or a probe error or lastError naming
	// invalid_auth / not_authed / token_revoked.
	Authentication string
	// Connectivity: an account connected, or lifecycle blocked / a terminal
	// disconnect; the caller adds /readyz failing ["slack"] (SlackFailing).
	Connectivity string
	// Detail is the text the verdicts came from (lastError or probe error).
	Detail string
}

// slackAuthErrors are the Slack error codes that mean the token is bad.
var slackAuthErrors = []string{"invalid_auth", "not_authed", "token_revoked"}

// Slack derives the Slack checks. readyFailing is Health.Failing from a
// probe (nil if unknown): "slack" in it fails connectivity.
func (s ChannelsStatus) Slack(readyFailing []string) SlackChecks {
	out := SlackChecks{Configuration: CheckUnknown, Authentication: CheckUnknown, Connectivity: CheckUnknown}
	raw, ok := s.Channels["slack"]
	accounts := s.ChannelAccounts["slack"]
	if !ok && len(accounts) == 0 {
		out.Configuration = CheckFailed
		return out
	}
	out.Present = true
	var ch struct {
		Configured     *bool           `json:"configured"`
		BotTokenSource string          `json:"botTokenSource"`
		AppTokenSource string          `json:"appTokenSource"`
		Running        *bool           `json:"running"`
		LastError      *string         `json:"lastError"`
		Probe          json.RawMessage `json:"probe"`
	}
	_ = json.Unmarshal(raw, &ch)
	out.BotTokenSource, out.AppTokenSource = ch.BotTokenSource, ch.AppTokenSource
	switch {
	case ch.Configured != nil && *ch.Configured && ch.BotTokenSource != "" && ch.BotTokenSource != "none" && ch.AppTokenSource != "" && ch.AppTokenSource != "none":
		out.Configuration = CheckSucceeded
	case ch.Configured != nil && !*ch.Configured:
		out.Configuration = CheckFailed
	}

	// Authentication: probe verdicts first, then error texts.
	probes := []json.RawMessage{ch.Probe}
	texts := []string{}
	if ch.LastError != nil {
		texts = append(texts, *ch.LastError)
	}
	for _, a := range accounts {
		probes = append(probes, a.Probe)
		if a.LastError != nil {
			texts = append(texts, *a.LastError)
		}
	}
	for _, p := range probes {
		var pr struct {
			OK    *bool  `json:"ok"`
			Error string `json:"error"`
		}
		if len(p) == 0 || json.Unmarshal(p, &pr) != nil || pr.OK == nil {
			continue
		}
		if *pr.OK {
			out.Authentication = CheckSucceeded
		} else if pr.Error != "" {
			texts = append(texts, pr.Error)
		}
	}
	for _, t := range texts {
		for _, code := range slackAuthErrors {
			if strings.Contains(t, code) {
				out.Authentication, out.Detail = CheckFailed, t
			}
		}
	}
	if out.Detail == "" && len(texts) > 0 {
		out.Detail = texts[0]
	}

	// Connectivity.
	for _, a := range accounts {
		switch {
		case a.Connected != nil && *a.Connected:
			if out.Connectivity == CheckUnknown {
				out.Connectivity = CheckSucceeded
			}
		case a.Lifecycle == "blocked", a.TerminalDisconnect, a.HealthState == "terminal-disconnect":
			out.Connectivity = CheckFailed
		}
	}
	for _, f := range readyFailing {
		if f == "slack" {
			out.Connectivity = CheckFailed
		}
	}
	return out
}
