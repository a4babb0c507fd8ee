package occ

// Error codes of the ssh compute driver (a deployment or Namespace that
// fails with a permanent one shows it as its error code).
const (
	// SSHHostKeyMismatch: the host's key is not the one the known_hosts
	// file names for it (or the file names none): occ never trusts a key
	// on first use. Permanent.
	SSHHostKeyMismatch = "SSH_HOST_KEY_MISMATCH"
	// SSHAuthenticationFailed: the host refused occ's identity. Permanent.
	SSHAuthenticationFailed = "SSH_AUTHENTICATION_FAILED"
	// SSHHostUnreachable: no SSH connection to the host could be made (a
	// refused or timed-out connection). Marked unavailable: waited out.
	SSHHostUnreachable = "SSH_HOST_UNREACHABLE"
	// SSHHostLockBusy: another occ held the host's lock for longer than
	// the wait. Marked unavailable: waited out.
	SSHHostLockBusy = "SSH_HOST_LOCK_BUSY"
	// SSHOperationTimeout: an operation on the host ran past its bound.
	SSHOperationTimeout = "SSH_OPERATION_TIMEOUT"
	// SSHOutputTooLarge: an operation on the host printed more than occ
	// reads.
	SSHOutputTooLarge = "SSH_OUTPUT_TOO_LARGE"
	// SSHOperationFailed: a command on the host failed.
	SSHOperationFailed = "SSH_OPERATION_FAILED"
	// SSHOwnershipConflict: an account, unit or file exists under a name
	// occ uses without occ's mark; occ never adopts it. Permanent.
	SSHOwnershipConflict = "SSH_OWNERSHIP_CONFLICT"
	// SSHNoHost: the Namespace's name has no host in compute.ssh.hosts.
	// Permanent.
	SSHNoHost = "SSH_NO_HOST"
)
