package occ

// Permanent error codes of the docker compute driver (a deployment or
// Namespace that fails with one shows it as its error code).
const (
	// DockerOwnershipConflict: a container, network or volume exists under
	// a name occ uses but without occ's labels; occ never adopts it.
	DockerOwnershipConflict = "DOCKER_OWNERSHIP_CONFLICT"
	// DockerRequestInvalid: the Docker engine refused a request as invalid
	// (HTTP 400).
	DockerRequestInvalid = "DOCKER_REQUEST_INVALID"
	// DockerForeignObjects: a Namespace's network has containers occ did
	// not create, so occ does not remove it.
	DockerForeignObjects = "DOCKER_FOREIGN_OBJECTS"
)
