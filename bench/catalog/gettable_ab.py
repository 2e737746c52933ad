#!/usr/bin/env python3
"""GetTable under wrk, two (or more) server binaries side by side, alternating.

Starts each binary once over its own fresh temporary data directory (a database and the
benchmark's plain table, no partitions), then runs the wrk step of bench/catalog/run.py (one
pre-signed GetTable replayed by `wrk -t2 -c32 --latency`) against each binary in turn, for
--rounds rounds, alternating the order every round so both see about the same machine load.
Prints one line per run (requests/s, p50, p99, server cores busy, load average) and the median
per binary. Only ratios mean something on a shared machine.

    python3 bench/catalog/gettable_ab.py --bin before=/tmp/openglue-before --bin after=build/openglue
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import run  # noqa: E402
from benchlib import OpenGlueServer, loadavg  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", action="append", required=True, metavar="NAME=PATH",
                   help="a binary to measure, named; give two or more")
    p.add_argument("--rounds", type=int, default=4, help="runs per binary [4]")
    p.add_argument("--duration", type=int, default=10, help="seconds of wrk per run [10]")
    p.add_argument("--threads", type=int, default=2, help="wrk -t [2]")
    p.add_argument("--connections", type=int, default=32, help="wrk -c [32]")
    p.add_argument("--keep", action="store_true", help="keep the temporary directories (logs, data)")
    p.add_argument("--perf", metavar="DIR",
                   help="profile each run with `perf record` (slows the server); data and "
                        "`perf report` summaries go to DIR")
    args = p.parse_args(argv)
    bins = [tuple(b.split("=", 1)) for b in args.bin]
    servers = {}
    runs = {name: [] for name, _ in bins}
    try:
        for name, path in bins:
            workdir = tempfile.mkdtemp(prefix=f"gettable-ab-{name}-")
            server = OpenGlueServer(workdir, os.path.abspath(path), copy_binary=True,
                                    log_name="openglue.log").start()
            glue = run.boto_client(server.endpoint)
            glue.create_database(DatabaseInput={"Name": run.DATABASE})
            glue.create_table(DatabaseName=run.DATABASE, TableInput=run.table_input(run.PLAIN))
            servers[name] = server
        for r in range(args.rounds):
            order = bins if r % 2 == 0 else list(reversed(bins))
            for name, _ in order:
                server = servers[name]
                load = loadavg()
                with run.PerfRecorder(args.perf, server, f"{name}-gettable-r{r + 1}"):
                    res = run.wrk_gettable(server, server.workdir, args.threads,
                                           args.connections, args.duration)
                if res["non2xx"] or res["socket_errors"]:
                    raise RuntimeError(f"{name}: {res['non2xx']} non-2xx, "
                                       f"{res['socket_errors']} socket errors")
                runs[name].append(res)
                print(f"round {r + 1} {name:>8}: {res['rps']:>9,.0f} req/s  p50 "
                      f"{res['p50_ms'] * 1000:6.0f} us  p99 {res['p99_ms'] * 1000:6.0f} us  "
                      f"server cores {res['server_cores_busy']:.2f}  load {load}", flush=True)
        for name, _ in bins:
            rps = [x["rps"] for x in runs[name]]
            print(f"median {name:>8}: {statistics.median(rps):>9,.0f} req/s "
                  f"(min {min(rps):,.0f}, max {max(rps):,.0f}), p50 "
                  f"{statistics.median(x['p50_ms'] for x in runs[name]) * 1000:.0f} us, p99 "
                  f"{statistics.median(x['p99_ms'] for x in runs[name]) * 1000:.0f} us")
    finally:
        for server in servers.values():
            server.stop()
            if not args.keep:
                shutil.rmtree(server.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
