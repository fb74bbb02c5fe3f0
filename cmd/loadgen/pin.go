package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
)

// --pin (Linux, --self): the game runs alone on CPU gameCPU, and the load
// tool and operator-sim on the others, so that the game's CPU time from /proc
// is its own work and the load cannot take its core (docs/performance.md).
// It uses taskset(1), from util-linux: the game and the floor are started
// under `taskset -c 0`, and the load tool moves itself and every thread it
// has (taskset -a) to the other CPUs before it starts operator-sim, which
// inherits them.

// gameCPU is the CPU of the game and of the floor under --pin.
const gameCPU = 0

// checkPin says why --pin cannot work here, or nil.
func checkPin() error {
	if runtime.GOOS != "linux" {
		return errors.New("--pin needs Linux (taskset)")
	}
	if runtime.NumCPU() < 2 {
		return errors.New("--pin needs at least 2 CPUs: one for the game, the others for the load")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return errors.New("--pin needs taskset (Debian: util-linux)")
	}
	return nil
}

// otherCPUs is the taskset list of every CPU but gameCPU.
func otherCPUs() string {
	if last := runtime.NumCPU() - 1; last > gameCPU+1 {
		return fmt.Sprintf("%d-%d", gameCPU+1, last)
	}
	return strconv.Itoa(gameCPU + 1)
}

// pinSelf moves the load tool, every thread of it, off the game's CPU.
func pinSelf() error {
	out, err := exec.Command("taskset", "-a", "-p", "-c", otherCPUs(), strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset the load tool to CPUs %s: %w: %s", otherCPUs(), err, out)
	}
	return nil
}

// onGameCPU returns how to start program with args: under --pin through
// taskset on gameCPU (taskset execs it: the process id is the program's).
func (o *options) onGameCPU(program string, args ...string) (string, []string) {
	if !o.pin {
		return program, args
	}
	return "taskset", append([]string{"-c", strconv.Itoa(gameCPU), program}, args...)
}
