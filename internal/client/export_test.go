package client

// ReadEvents exposes the Server-Sent Events parser to the tests.
var ReadEvents = readEvents
