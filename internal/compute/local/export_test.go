package local

// Test access to the /proc helpers.
var (
	ProcessesWithEnv = processesWithEnv
	ReadEnviron      = readEnviron
)
