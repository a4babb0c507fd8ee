package kubernetes_test

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/kubernetes"
)

// TestEndpointRelayScript runs the endpoint relay with the host's Node.js
// as its container does: a "gateway" listens on 127.0.0.1:P, the relay on
// another address's port P (the Pod's address; here 127.0.0.2), and a
// client of the relay talks to the gateway both ways, which sees it come
// from 127.0.0.1, a direct loopback client. The client's close reaches
// the gateway, whose close ends the client's connection.
func TestEndpointRelayScript(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH (scripts/test installs Debian's npm, which brings it): %v", err)
	}
	gw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	port := gw.Addr().(*net.TCPAddr).Port
	peers := make(chan string, 4)
	go func() {
		for {
			c, err := gw.Accept()
			if err != nil {
				return
			}
			peers <- c.RemoteAddr().(*net.TCPAddr).IP.String()
			go func() { // echo each line with a prefix, until the client closes
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "gateway: %s\n", sc.Text())
				}
			}()
		}
	}()
	relay := exec.Command(node, "-e", kubernetes.EndpointRelayScript(port))
	relay.Env = []string{"PATH=/usr/bin:/bin", "POD_IP=127.0.0.2"}
	out, _ := relay.StdoutPipe()
	relay.Stderr = relay.Stdout
	if err := relay.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = relay.Process.Kill(); _ = relay.Wait() }()
	go func() { // the relay prints nothing unless it fails
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			t.Logf("relay: %s", sc.Text())
		}
	}()
	addr := net.JoinHostPort("127.0.0.2", strconv.Itoa(port))
	var c net.Conn
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the relay never listened on %s: %v", addr, err)
		}
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, line := range []string{"hello", "second line"} {
		fmt.Fprintln(c, line)
		got, err := r.ReadString('\n')
		if err != nil || got != "gateway: "+line+"\n" {
			t.Fatalf("through the relay: %q, %v", got, err)
		}
	}
	if peer := <-peers; peer != "127.0.0.1" {
		t.Errorf("the gateway saw the relayed client come from %s, want 127.0.0.1", peer)
	}
	gw.Close()
	c.(*net.TCPConn).CloseWrite() // the gateway's echo ends, and it closes
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := r.ReadString('\n'); err == nil {
		t.Errorf("after the gateway side closed, read %q", b)
	}
}
