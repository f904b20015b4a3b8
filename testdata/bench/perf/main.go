//go:build linux

// Command perf is the benchmark behind scripts/bench: it measures mcpx's
// own cost against a floor — a minimal client written with the standard
// library alone (./floor) doing the same job — and a raw Go MCP server
// (server.go; over stdio through ./shim, so the server's CPU and memory are
// never charged to the client; Streamable HTTP in this process). Each
// figure is a ratio to the floor measured in the same run: the runs of
// mcpx and the floor are interleaved and their medians compared, so a
// machine shared with other work still gives comparable ratios.
package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	switch os.Getenv("PERF_SERVE") {
	case "stdio":
		if err := serveStdio(envConfig()); err != nil {
			fmt.Fprintln(os.Stderr, "perf server:", err)
			os.Exit(1)
		}
		return
	case "http":
		// For profiling by hand: the HTTP server alone, until killed.
		h, err := startHTTP()
		if err != nil {
			fmt.Fprintln(os.Stderr, "perf server:", err)
			os.Exit(1)
		}
		fmt.Println(h.URL(envConfig()))
		select {}
	}
	var o options
	flag.StringVar(&o.mcpx, "mcpx", "", "the mcpx binary")
	flag.StringVar(&o.floor, "floor", "", "the floor binary (./floor)")
	flag.StringVar(&o.shim, "shim", "", "the shim binary (./shim)")
	flag.IntVar(&o.runs, "runs", 15, "runs of each quick case (per client)")
	flag.IntVar(&o.bigRuns, "big-runs", 3, "runs of each large case (per client)")
	flag.IntVar(&o.calls, "calls", 400, "tool calls in a REPL script")
	flag.IntVar(&o.size, "size", 50<<20, "bytes of the large result, resource and blob")
	flag.IntVar(&o.manyTools, "tools", 10000, "tools of the large server")
	flag.StringVar(&o.only, "only", "", "run only the figures whose name contains this")
	flag.BoolVar(&o.quick, "quick", false, "smoke mode: small sizes, one run each")
	flag.Parse()
	if o.mcpx == "" || o.floor == "" || o.shim == "" {
		fmt.Fprintln(os.Stderr, "usage: perf -mcpx PATH -floor PATH -shim PATH [-runs N] [-only NAME] [-quick]")
		os.Exit(2)
	}
	if o.quick {
		o.runs, o.bigRuns, o.calls, o.size, o.manyTools = 1, 1, 20, 1<<20, 500
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	mcpx, floor, shim      string
	runs, bigRuns, calls   int
	size, manyTools        int
	only                   string
	quick                  bool
	self, dir, rusageFile  string
	http                   *httpServer
	failures, measurements int
}

// sample is one run of one client.
type sample struct {
	wall, cpu time.Duration
	rss       int64 // peak RSS, bytes
}

// job is one client doing one job: how to start it.
type job struct {
	argv  []string
	env   []string
	stdin string
	stdio bool // its server is the stdio server behind the shim
}

func run(o options) error {
	var err error
	if o.self, err = os.Executable(); err != nil {
		return err
	}
	// Orphaned stdio servers (see ./shim) come to this process.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("becoming a subreaper: %w", err)
	}
	if o.dir, err = os.MkdirTemp("", "mcpx-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(o.dir)
	o.rusageFile = filepath.Join(o.dir, "shim-rusage")
	if o.http, err = startHTTP(); err != nil {
		return err
	}
	defer o.http.Close()

	small := config{tools: 20, page: 100, size: 0}
	many := config{tools: o.manyTools, page: 100}
	big := config{tools: 20, page: 100, size: o.size}
	args := `{"message":"hi"}`
	out := filepath.Join(o.dir, "out.bin")

	fmt.Printf("mcpx benchmark: ratios to the floor (a stdlib-only minimal client) in this run; medians of %d runs (%d for large payloads), interleaved\n", o.runs, o.bigRuns)
	fmt.Printf("%-52s %12s %12s %8s  %s\n", "figure", "mcpx", "floor", "ratio", "goal")

	o.figure(func() error {
		if o.want("--help") {
			m, f, err := o.pair(o.runs, o.mcpxJob(nil, "--help"), o.floorJob(nil, "help"))
			if err != nil {
				return err
			}
			o.row("--help start-up (wall)", ms(m.wall), ms(f.wall), ratio(m.wall, f.wall), "<=", 1.3)
			o.row("  CPU", ms(m.cpu), ms(f.cpu), ratio(m.cpu, f.cpu), "", 0)
		}
		return nil
	})
	o.figure(func() error {
		if o.want("stdio one-shot") {
			m, f, err := o.pair(o.runs, o.stdio(o.mcpxJob, small, "tools", "list"), o.stdio(o.floorJob, small, "list"))
			if err != nil {
				return err
			}
			o.row("stdio one-shot tools list: wall", ms(m.wall), ms(f.wall), ratio(m.wall, f.wall), "<=", 1.3)
			o.row("stdio one-shot tools list: CPU", ms(m.cpu), ms(f.cpu), ratio(m.cpu, f.cpu), "", 0)
			o.row("stdio one-shot tools list: peak RSS", mib(m.rss), mib(f.rss), float64(m.rss)/float64(f.rss), "<=", 1.3)
		}
		return nil
	})
	o.figure(func() error {
		if o.want("HTTP one-shot") {
			url := o.http.URL(small)
			gets := o.http.gets.Load()
			m, f, err := o.pair(o.runs, o.mcpxJob(nil, "tools", "list", "--url", url), o.floorJob(nil, "-url", url, "list"))
			if err != nil {
				return err
			}
			getsPerRun := float64(o.http.gets.Load()-gets) / float64(o.runs)
			o.row("HTTP one-shot tools list (wall)", ms(m.wall), ms(f.wall), ratio(m.wall, f.wall), "<=", 1.3)
			o.row("  CPU", ms(m.cpu), ms(f.cpu), ratio(m.cpu, f.cpu), "", 0)
			m, f, err = o.pair(o.runs, o.mcpxJob(nil, "tools", "call", "echo", "--args", args, "--url", url), o.floorJob(nil, "-url", url, "call", "echo", args))
			if err != nil {
				return err
			}
			o.row("HTTP one-shot tools call (wall)", ms(m.wall), ms(f.wall), ratio(m.wall, f.wall), "<=", 1.3)
			o.row("  CPU", ms(m.cpu), ms(f.cpu), ratio(m.cpu, f.cpu), "", 0)
			fmt.Printf("  (GET streams a one-shot tools list opened: %.1f; the floor opens none)\n", getsPerRun)
		}
		return nil
	})
	o.figure(func() error {
		script := strings.Repeat(`tools call echo --args '`+args+"'\n", o.calls)
		floorScript := strings.Repeat("echo "+args+"\n", o.calls)
		for _, tr := range []string{"stdio", "HTTP"} {
			if !o.want("REPL script " + tr) {
				continue
			}
			var mj, mj16, fj, fj16 job
			if tr == "stdio" {
				mj, fj, fj16 = o.stdio(o.mcpxJob, small, "repl"), o.stdio(o.floorJob, small, "script"), o.stdio(o.floorJob, small, "-inflight", "16", "script")
				mj16 = o.stdio(o.mcpxJob, small, "repl", "--parallel", "16")
			} else {
				url := o.http.URL(small)
				mj, fj, fj16 = o.mcpxJob(nil, "repl", "--url", url), o.floorJob(nil, "-url", url, "script"), o.floorJob(nil, "-url", url, "-inflight", "16", "script")
				mj16 = o.mcpxJob(nil, "repl", "--parallel", "16", "--url", url)
			}
			mj.stdin, mj16.stdin, fj.stdin, fj16.stdin = script, script, floorScript, floorScript
			m, f, err := o.pair(o.runs, mj, fj)
			if err != nil {
				return err
			}
			n := float64(o.calls)
			mr, fr := n/m.wall.Seconds(), n/f.wall.Seconds()
			o.row("REPL script, 1 in flight, "+tr+": calls/s", fmt.Sprintf("%.0f", mr), fmt.Sprintf("%.0f", fr), mr/fr, ">=", 0.67)
			mc, fc := m.cpu/time.Duration(o.calls), f.cpu/time.Duration(o.calls)
			o.row("  client CPU per call", us(mc), us(fc), ratio(mc, fc), "<=", 2)
			m16, f16, err := o.pair(o.runs, mj16, fj16)
			if err != nil {
				return err
			}
			mr16, fr16 := n/m16.wall.Seconds(), n/f16.wall.Seconds()
			o.row("  16 in flight (repl --parallel 16): calls/s", fmt.Sprintf("%.0f", mr16), fmt.Sprintf("%.0f", fr16), mr16/fr16, "", 0)
			o.row("    client CPU per call", us(m16.cpu/time.Duration(o.calls)), us(f16.cpu/time.Duration(o.calls)), ratio(m16.cpu, f16.cpu), "", 0)
		}
		return nil
	})
	o.figure(func() error {
		if o.want("k=v") {
			m, a, err := o.pair(o.runs, o.stdio(o.mcpxJob, small, "tools", "call", "echo", "message=hi"), o.stdio(o.mcpxJob, small, "tools", "call", "echo", "--args", args))
			if err != nil {
				return err
			}
			o.row("tools call k=v vs --args, one-shot stdio (wall)", ms(m.wall), ms(a.wall)+"*", ratio(m.wall, a.wall), "<=", 1.1)
			// In a REPL the first key=value call lists the tools (every
			// page) once; what must cost the same as --args is each call
			// after that: the marginal cost of a call, from scripts of
			// few and of many calls. Many is enough calls (2,000 by
			// default) for their cost to stand well above the noise of
			// the first call's hundred pages, which both scripts pay.
			few, lots := max(o.calls/20, 2), max(o.calls*5, 10)
			script := func(line string, n int) job {
				j := o.stdio(o.mcpxJob, many, "repl")
				j.stdin = strings.Repeat(line, n)
				return j
			}
			kvLine, argsLine := "tools call echo message=hi\n", `tools call echo --args '`+args+"'\n"
			kvFew, argsFew, err := o.pair(o.runs, script(kvLine, few), script(argsLine, few))
			if err != nil {
				return err
			}
			kvLots, argsLots, err := o.pair(o.runs, script(kvLine, lots), script(argsLine, lots))
			if err != nil {
				return err
			}
			n := time.Duration(lots - few)
			kvWall, jaWall := (kvLots.wall-kvFew.wall)/n, (argsLots.wall-argsFew.wall)/n
			kvCPU, jaCPU := (kvLots.cpu-kvFew.cpu)/n, (argsLots.cpu-argsFew.cpu)/n
			o.row(fmt.Sprintf("REPL k=v vs --args per call, %d tools: CPU", many.tools), us(kvCPU), us(jaCPU)+"*", ratio(kvCPU, jaCPU), "<=", 1.1)
			o.row("  wall", us(kvWall), us(jaWall)+"*", ratio(kvWall, jaWall), "", 0)
			// What a script pays once: start-up and the tools list (every
			// page), which --args needs too, to check the arguments.
			kvOnce, jaOnce := kvFew.wall-time.Duration(few)*kvWall, argsFew.wall-time.Duration(few)*jaWall
			o.row("  once per script: start-up, the tools list", ms(kvOnce), ms(jaOnce)+"*", ratio(kvOnce, jaOnce), "", 0)
			fmt.Println("  (* here the reference is mcpx with --args, not the floor)")
		}
		return nil
	})
	o.figure(func() error {
		bigCases := []struct {
			name  string
			mcpx  job
			floor job
		}{
			{"result over stdio", o.stdio(o.mcpxJob, big, "tools", "call", "big"), o.stdio(o.floorJob, big, "call", "big", "{}")},
			{"text result -o FILE over stdio", o.stdio(o.mcpxJob, big, "tools", "call", "big", "-o", out), o.stdio(o.floorJob, big, "call", "big", "{}", "-o", out)},
			{"result over HTTP", o.mcpxJob(nil, "tools", "call", "big", "--url", o.http.URL(big)), o.floorJob(nil, "-url", o.http.URL(big), "call", "big", "{}")},
			{"resource (text) over HTTP", o.mcpxJob(nil, "resources", "read", "bench://big", "--url", o.http.URL(big)), o.floorJob(nil, "-url", o.http.URL(big), "read", "bench://big")},
			{"blob -o FILE over stdio", o.stdio(o.mcpxJob, big, "resources", "read", "bench://blob", "-o", out), o.stdio(o.floorJob, big, "read", "bench://blob", "-o", out)},
			{"blob -o FILE over HTTP", o.mcpxJob(nil, "resources", "read", "bench://blob", "-o", out, "--url", o.http.URL(big)), o.floorJob(nil, "-url", o.http.URL(big), "read", "bench://blob", "-o", out)},
		}
		for _, c := range bigCases {
			name := fmt.Sprintf("%d MiB %s", o.size>>20, c.name)
			if !o.want(name) {
				continue
			}
			m, f, err := o.pair(o.bigRuns, c.mcpx, c.floor)
			if err != nil {
				return err
			}
			o.row(name+": peak RSS / payload", mib(m.rss), mib(f.rss), float64(m.rss)/float64(o.size), "<=", 2)
			o.row("  time", ms(m.wall), ms(f.wall), ratio(m.wall, f.wall), "<=", 1.5)
			o.row("  CPU", ms(m.cpu), ms(f.cpu), ratio(m.cpu, f.cpu), "", 0)
		}
		return nil
	})
	o.figure(func() error {
		if name := fmt.Sprintf("tools list of %d tools (table), stdio", many.tools); o.want(name) {
			m, f, err := o.pair(o.runs, o.stdio(o.mcpxJob, many, "tools", "list"), o.stdio(o.floorJob, many, "list"))
			if err != nil {
				return err
			}
			o.row(name, ms(m.wall), ms(f.wall), ratio(m.wall, f.wall), "<=", 2)
			o.row("  CPU", ms(m.cpu), ms(f.cpu), ratio(m.cpu, f.cpu), "", 0)
			o.row("  peak RSS", mib(m.rss), mib(f.rss), float64(m.rss)/float64(f.rss), "", 0)
		}
		return nil
	})
	fmt.Printf("%d of %d goals met\n", o.measurements-o.failures, o.measurements)
	return nil
}

// figure runs one figure; a failure is reported as a missed goal and the
// benchmark goes on.
func (o *options) figure(f func() error) {
	if err := f(); err != nil {
		o.measurements++
		o.failures++
		fmt.Printf("ERROR: %v\n", err)
	}
}

func (o *options) want(name string) bool {
	return o.only == "" || strings.Contains(strings.ToLower(name), strings.ToLower(o.only))
}

// row prints one figure; a goal of 0 prints none.
func (o *options) row(name, mcpx, floor string, r float64, op string, goal float64) {
	mark := ""
	if goal != 0 {
		o.measurements++
		ok := r <= goal
		if op == ">=" {
			ok = r >= goal
		}
		mark = fmt.Sprintf("%s %.2f", op, goal)
		switch {
		case !(r > 0) || math.IsInf(r, 0):
			// A difference of two medians can come out at or below zero
			// on a busy machine: that measured nothing, and meets no goal.
			o.failures++
			mark += "  NOT MEASURED (noise: run again)"
		case !ok:
			o.failures++
			mark += "  MISSED"
		}
	}
	shown := fmt.Sprintf("%8.2f", r)
	if r == 0 {
		shown = ""
	}
	fmt.Printf("%-52s %12s %12s %8s  %s\n", name, mcpx, floor, shown, mark)
}

func (o *options) mcpxJob(env []string, args ...string) job {
	return job{argv: append([]string{o.mcpx}, args...), env: env}
}

func (o *options) floorJob(env []string, args ...string) job {
	return job{argv: append([]string{o.floor}, args...), env: env}
}

// stdio makes a job of a client talking to the stdio server with c's
// knobs; the server command follows "--".
func (o *options) stdio(client func([]string, ...string) job, c config, args ...string) job {
	j := client(c.env(), append(args, "--", o.shim, o.self)...)
	j.stdio = true
	return j
}

// pair runs a and b n times each, interleaved, and returns their medians.
func (o *options) pair(n int, a, b job) (sample, sample, error) {
	var as, bs []sample
	for range n {
		for _, x := range []struct {
			j   job
			out *[]sample
		}{{a, &as}, {b, &bs}} {
			s, err := o.measure(x.j)
			if err != nil {
				return sample{}, sample{}, err
			}
			*x.out = append(*x.out, s)
		}
	}
	return median(as), median(bs), nil
}

func (o *options) median(n int, j job) (sample, error) {
	var ss []sample
	for range n {
		s, err := o.measure(j)
		if err != nil {
			return sample{}, err
		}
		ss = append(ss, s)
	}
	return median(ss), nil
}

// measure runs j once: wall time, CPU time (less the shim's) and peak RSS.
func (o *options) measure(j job) (sample, error) {
	cmd := exec.Command(j.argv[0], j.argv[1:]...)
	cmd.Env = append(os.Environ(), j.env...)
	cmd.Env = append(cmd.Env, "PERF_SHIM_RUSAGE="+o.rusageFile, "NO_COLOR=1", "MCPX_HISTORY_FILE="+filepath.Join(o.dir, "history"))
	cmd.Stdin = strings.NewReader(j.stdin)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	os.Remove(o.rusageFile)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	reapOrphans()
	if err != nil {
		return sample{}, fmt.Errorf("%s: %w: %s", strings.Join(j.argv, " "), err, lastLine(stderr.String()))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, errors.New("no rusage")
	}
	cpu := time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
	if j.stdio {
		b, err := os.ReadFile(o.rusageFile)
		if err != nil {
			return sample{}, fmt.Errorf("%s: the shim left no rusage: %w", strings.Join(j.argv, " "), err)
		}
		shim, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		cpu -= time.Duration(shim)
	}
	return sample{wall: wall, cpu: cpu, rss: ru.Maxrss * 1024}, nil
}

// reapOrphans waits for the stdio servers the shims left behind.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// median takes each measure's median separately.
func median(ss []sample) sample {
	pick := func(f func(sample) int64) int64 {
		v := make([]int64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.SortFunc(v, cmp.Compare)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return sample{
		wall: time.Duration(pick(func(s sample) int64 { return int64(s.wall) })),
		cpu:  time.Duration(pick(func(s sample) int64 { return int64(s.cpu) })),
		rss:  pick(func(s sample) int64 { return s.rss }),
	}
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
func ms(d time.Duration) string        { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
func us(d time.Duration) string        { return fmt.Sprintf("%.0f µs", float64(d)/1e3) }
func mib(n int64) string               { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
