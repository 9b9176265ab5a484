// Package freeport picks loopback TCP ports for tests that start servers
// (etcd members, PostgreSQL) on ports they must be told in advance.
package freeport

import "net"

// Pick returns n distinct loopback TCP ports that were free a moment ago.
// It holds each port's listener open until all n are chosen, and closes
// them all before it returns: a port closed before the next pick could be
// handed out again, and a server told one port twice does not start.
// Another process may still take a port before the server binds it.
func Pick(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
