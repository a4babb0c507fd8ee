package local

// Test access to the /proc helpers.
var (
	ProcessesWithEnv = processesWithEnv
	ReadEnviron      = readEnviron
)

// Test access to the user namespace map check.
var Mapped = mapped
