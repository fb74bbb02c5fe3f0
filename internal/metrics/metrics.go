// Package metrics registers Prometheus collectors so that parts which share a
// registry share a collector: registering one that is already there answers
// the one registered first, never a second copy and never an error.
//
// It holds no metric of its own and must never register anything by itself.
package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with r and returns it, or the collector already
// registered under the same description when that one is of c's type.
func Register[C prometheus.Collector](r prometheus.Registerer, c C) (C, error) {
	err := r.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &are):
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("metrics: %w", err)
}
