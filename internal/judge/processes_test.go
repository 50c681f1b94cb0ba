package judge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// spawnShell tries, in each language, to start `sh -c 'echo spawned'` the
// way its programs do (ProcessBuilder, os/exec, child_process, subprocess,
// fork) and prints "spawned" if the shell ran, "refused" if starting it
// failed; then it starts four threads of its own where the language has
// them (the runtime's threads must still work) and prints their sum.
var spawnShell = map[string]string{
	"java": `import java.util.concurrent.atomic.*;
public class Main {
    public static void main(String[] args) throws Exception {
        try {
            Process p = new ProcessBuilder("sh", "-c", "echo spawned").inheritIO().start();
            p.waitFor();
        } catch (java.io.IOException e) {
            System.out.println("refused");
        }
        AtomicLong sum = new AtomicLong();
        Thread[] ts = new Thread[4];
        for (int i = 0; i < 4; i++) { final int k = i + 1; ts[i] = new Thread(() -> sum.addAndGet(k)); ts[i].start(); }
        for (Thread t : ts) t.join();
        System.out.println(sum.get());
    }
}
`,
	"kotlin": `import java.util.concurrent.atomic.AtomicLong
fun main() {
    try {
        ProcessBuilder("sh", "-c", "echo spawned").inheritIO().start().waitFor()
    } catch (e: java.io.IOException) {
        println("refused")
    }
    val sum = AtomicLong()
    val ts = (1..4).map { k -> Thread { sum.addAndGet(k.toLong()) }.also { it.start() } }
    ts.forEach { it.join() }
    println(sum.get())
}
`,
	"go": `package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

func main() {
	cmd := exec.Command("sh", "-c", "echo spawned")
	cmd.Stdout = os.Stdout
	if err := cmd.Run(); err != nil {
		fmt.Println("refused")
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sum := 0
	for k := 1; k <= 4; k++ {
		wg.Add(1)
		go func() { defer wg.Done(); mu.Lock(); sum += k; mu.Unlock() }()
	}
	wg.Wait()
	fmt.Println(sum)
}
`,
	"javascript": `const { spawnSync } = require('child_process');
const r = spawnSync('sh', ['-c', 'echo spawned'], { stdio: 'inherit' });
if (r.error || r.status !== 0) console.log('refused');
console.log(1 + 2 + 3 + 4);
`,
	"python": `import subprocess
try:
    subprocess.run(["sh", "-c", "echo spawned"], check=True)
except OSError:
    print("refused", flush=True)
print(1 + 2 + 3 + 4)
`,
	"c": `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(void) {
	pid_t p = fork();
	if (p == 0) { execl("/bin/sh", "sh", "-c", "echo spawned", (char *)0); _exit(127); }
	if (p < 0) puts("refused"); else waitpid(p, 0, 0);
	printf("%d\n", 1 + 2 + 3 + 4);
	return 0;
}
`,
}

// TestNoProcessesOfItsOwn: with the default allowance of one process, no
// language's program can start another process — a shell through the
// JVM's ProcessBuilder (once allowed by the JVM's thread allowance),
// os/exec, child_process, subprocess, fork — while the threads its
// runtime and the program itself start still work.
func TestNoProcessesOfItsOwn(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	for lang, src := range spawnShell {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			requireLanguage(t, e, lang)
			p := compile(t, e, lang, src)
			rr, out := run(t, p, "", judge.Limits{CPUTime: 5 * time.Second})
			if strings.Contains(out, "spawned") || !strings.Contains(out, "refused") {
				t.Fatalf("%s started a shell (output %q, %+v)", lang, out, rr)
			}
			if !strings.HasSuffix(strings.TrimSpace(out), "10") {
				t.Fatalf("%s: the program's threads did not run (output %q, %+v)", lang, out, rr)
			}
		})
	}
}
