package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// BootstrapOptions configure the first start.
type BootstrapOptions struct {
	DataDir       string // bootstrap-admin.key goes here (0600)
	AdminEmail    string
	AdminPassword string // "" = generate one and report it once
	APIKey        string // "" = generate one
}

// BootstrapResult tells what the first start created.
type BootstrapResult struct {
	Created           bool
	AdminEmail        string
	GeneratedPassword string // only when generated; shown once
	KeyFile           string
}

// KeyFileName is the bootstrap service key's file in the data directory.
const KeyFileName = "bootstrap-admin.key"

// Bootstrap creates, in one transaction, the installation, a human admin, an
// installation service principal with the admin role and a service key, the
// built-in roles, the default Namespace and the audit event. It does nothing
// when an installation exists: later starts never re-bootstrap.
//
// Replicas may start at once on one database: the transaction first takes
// the start-up lock and then looks for the installation again, so the
// replicas that waited for the first one find its installation, roll back
// whole, and start as a later start would, with Created false.
func Bootstrap(ctx context.Context, st *store.Store, q Enqueuer, o BootstrapOptions) (BootstrapResult, error) {
	res := BootstrapResult{AdminEmail: o.AdminEmail, KeyFile: filepath.Join(o.DataDir, KeyFileName)}
	if _, err := st.GetInstallation(ctx); err == nil {
		return res, SyncBuiltinRoles(ctx, st)
	} else if !errors.Is(err, store.ErrNotFound) {
		return res, fmt.Errorf("check installation: %w", err)
	}
	password := o.AdminPassword
	if password == "" {
		password = iam.NewSessionToken()[5:37]
		res.GeneratedPassword = password
	}
	hash, err := iam.HashPassword(password)
	if err != nil {
		return res, err
	}
	key := o.APIKey
	if key == "" {
		key = iam.NewServiceKey()
	} else if !iam.ServiceKeyPattern.MatchString(key) {
		return res, errors.New("OCC_BOOTSTRAP_API_KEY must be occ_ followed by at least 32 characters of [A-Za-z0-9_]")
	}
	// Write the key beside its final name first (a name of its own, so
	// replicas sharing the directory never collide); it is moved into place
	// only after the transaction commits, and never overwrites a file.
	tmp, err := writeTemp(o.DataDir, KeyFileName+".*.tmp", key+"\n")
	if err != nil {
		return res, err
	}
	defer os.Remove(tmp)

	now := time.Now()
	in := occ.Installation{ID: occ.NewID(occ.PrefixInstallation), Name: "occ", CreatedAt: now}
	human := occ.Principal{ID: occ.NewID(occ.PrefixPrincipal), Kind: occ.PrincipalHuman, Name: "Administrator",
		Email: o.AdminEmail, PasswordHash: hash, CreatedAt: now, UpdatedAt: now, Version: 1}
	svc := occ.Principal{ID: occ.NewID(occ.PrefixServicePrincipal), Kind: occ.PrincipalService, Name: "bootstrap-admin",
		CreatedAt: now, UpdatedAt: now, Version: 1}
	sk := occ.ServiceKey{ID: occ.NewID(occ.PrefixServiceKey), PrincipalID: svc.ID, Name: "bootstrap-admin",
		Lookup: iam.KeyLookup(key), Digest: iam.Digest(key), CreatedBy: svc.ID, CreatedAt: now, ExpiresAt: now.Add(30 * 24 * time.Hour)}
	def := occ.Namespace{ID: occ.NewID(occ.PrefixNamespace), Name: "default", Status: occ.NamespaceProvisioning,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockStartup(ctx); err != nil {
			return fmt.Errorf("take the start-up lock: %w", err)
		}
		if _, err := tx.GetInstallation(ctx); err == nil {
			return errBootstrappedElsewhere
		} else if !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("check installation: %w", err)
		}
		if err := tx.InsertInstallation(ctx, in); err != nil {
			return fmt.Errorf("insert installation: %w", err)
		}
		if err := insertBuiltinRoles(ctx, tx, now); err != nil {
			return err
		}
		admin, err := tx.GetRoleByName(ctx, "", iam.RoleAdmin)
		if err != nil {
			return err
		}
		for _, p := range []occ.Principal{human, svc} {
			if err := tx.InsertPrincipal(ctx, p); err != nil {
				return fmt.Errorf("insert principal: %w", err)
			}
			b := occ.Binding{ID: occ.NewID(occ.PrefixBinding), PrincipalID: p.ID, RoleID: admin.ID, CreatedBy: svc.ID, CreatedAt: now}
			if err := tx.InsertBinding(ctx, b); err != nil {
				return fmt.Errorf("insert binding: %w", err)
			}
		}
		if err := tx.InsertServiceKey(ctx, sk); err != nil {
			return fmt.Errorf("insert service key: %w", err)
		}
		if err := tx.InsertNamespace(ctx, def); err != nil {
			return fmt.Errorf("insert default namespace: %w", err)
		}
		if err := q.Enqueue(ctx, tx, jobs.NamespaceArgs{NamespaceID: def.ID, Target: jobs.TargetReady, ActorID: svc.ID}); err != nil {
			return err
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditBootstrap, Action: "installation.bootstrap",
			Outcome: occ.OutcomeSuccess, ActorID: svc.ID, Resource: occ.ResourceRef{Kind: occ.KindInstallation, ID: in.ID},
			Details: map[string]any{"adminPrincipalId": human.ID, "servicePrincipalId": svc.ID, "keyId": sk.ID,
				"defaultNamespaceId": def.ID}})
	})
	if errors.Is(err, errBootstrappedElsewhere) {
		return BootstrapResult{AdminEmail: o.AdminEmail, KeyFile: res.KeyFile}, SyncBuiltinRoles(ctx, st)
	}
	if err != nil {
		return res, fmt.Errorf("bootstrap: %w", err)
	}
	if err := os.Link(tmp, res.KeyFile); err != nil {
		return res, fmt.Errorf("place %s: %w", res.KeyFile, err)
	}
	res.Created = true
	return res, nil
}

// errBootstrappedElsewhere rolls back a bootstrap that lost the race for
// the one installation row to another replica.
var errBootstrappedElsewhere = errors.New("another replica bootstrapped the installation")

// writeTemp creates a new file in dir, named after pattern (see
// os.CreateTemp), with mode 0600 and content, and returns its path.
func writeTemp(dir, pattern, content string) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("create a file in %s: %w", dir, err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// insertBuiltinRoles adds the four built-in roles.
func insertBuiltinRoles(ctx context.Context, tx *store.Tx, now time.Time) error {
	for name, perms := range iam.BuiltinRoles() {
		r := occ.Role{ID: occ.NewID(occ.PrefixRole), Name: name, Builtin: true, Permissions: perms, CreatedAt: now}
		if err := tx.InsertRole(ctx, r); err != nil {
			return fmt.Errorf("insert role %s: %w", name, err)
		}
	}
	return nil
}

// SyncBuiltinRoles brings the built-in roles' permissions up to this
// version's definition on every start, under the start-up lock so that
// replicas starting at once never write the same rows together.
func SyncBuiltinRoles(ctx context.Context, st *store.Store) error {
	return st.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockStartup(ctx); err != nil {
			return fmt.Errorf("take the start-up lock: %w", err)
		}
		for name, perms := range iam.BuiltinRoles() {
			r, err := tx.GetRoleByName(ctx, "", name)
			if errors.Is(err, store.ErrNotFound) {
				r = occ.Role{ID: occ.NewID(occ.PrefixRole), Name: name, Builtin: true, Permissions: perms, CreatedAt: time.Now()}
				if err := tx.InsertRole(ctx, r); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			if err := tx.SetRolePermissions(ctx, r.ID, perms); err != nil {
				return err
			}
		}
		return nil
	})
}
