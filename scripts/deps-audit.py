#!/usr/bin/python3
"""Deps audit: every Debian package the build and the test tools really use must be
installed by scripts/deps.sh on a fresh Debian 12 machine.

What is "used": every file that a traced command opened or executed successfully under
/usr, /lib*, /bin, /sbin and /etc (strace -f -e trace=openat,execve, written by
`deps-audit.py trace`), mapped to the package that owns it (dpkg's file lists, as
`dpkg -S` does, with merged-/usr and symlink targets resolved).

What a fresh machine has: the closure over Depends and Pre-Depends (no Recommends: deps.sh
installs with --no-install-recommends) of scripts/deps.sh's list for every audited board,
plus the packages every Debian system has (Essential: yes, Priority: required), resolved
against the packages installed here (an alternative group takes its first installed member,
a virtual package its installed providers).

A package is *required* when a traced process executed one of its files, when its file is in
the dynamic loader's closure of a traced executable (DT_NEEDED, recursively, and PT_INTERP),
or when a process opened one of its files in any other way than the loader does (headers,
link inputs, data, scripts). A shared object the loader opened that no DT_NEEDED chain of
the process's executable names was dlopened: the program asked for it because it was there
(Chromium and libva, libpci), so a package seen only through such files is *optional*,
listed as a note and never a failure (issue 43). A required package outside that closure
fails the audit, named with a file it provided and the program that opened it. `--without PKG` audits as if PKG were dropped from the list (the
self-test in `make check` drops one package and expects a failure).

Usage:
  deps-audit.py trace OUTFILE -- CMD ARGS...   run CMD under strace (seccomp-filtered), exit as CMD
  deps-audit.py probe OUTDIR                   run the test run's tools once each under strace
  deps-audit.py check [--board B]... [--without PKG]... [--hide PKG]... [--self-test] TRACE...
     --without: audit as if PKG were dropped from deps.sh's list
     --hide: audit as if PKG were not installed at all (not even through a dependency)
     --self-test: also show that dropping one listed package fails the audit
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
except ImportError:  # deps.sh installs python3-pyelftools
    sys.exit("deps-audit: python3-pyelftools is missing: run scripts/deps.sh")

AUDITED_ROOTS = ("/usr/", "/lib", "/bin/", "/sbin/", "/etc/")
NATIVE = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                        text=True).stdout.strip() or "amd64"
HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg, rc=2):
    print(f"deps-audit: {msg}", file=sys.stderr)
    sys.exit(rc)


# ------------------------------------------------------------------ tracing
def strace_cmd(out):
    # -z: successful calls only; --seccomp-bpf: untraced syscalls do not stop the tracee
    # -q (not -qq): keeps "+++ exited" lines, which end a pid's life (pids are reused);
    # clone/fork lines give each process its parent (read_traces follows the tree)
    return ["strace", "-f", "-q", "-z", "--seccomp-bpf", "-s", "0", "-e", "signal=none",
            "-e", "trace=openat,open,execve,clone,clone3,fork,vfork", "-o", out]


def cmd_trace(argv):
    if len(argv) < 3 or argv[1] != "--":
        die("usage: deps-audit.py trace OUTFILE -- CMD ARGS...")
    out, cmd = argv[0], argv[2:]
    if not shutil.which("strace"):
        die("strace is missing: run scripts/deps.sh (it installs strace)")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    argv = strace_cmd(out) + cmd
    os.execvp(argv[0], argv)  # keeps make's jobserver descriptors open (subprocess would close them)


# The tools the tests, the demo and the benchmarks start, run once each the way they use them.
# A tool that cannot run here is reported, and the audit still checks the files it opened.
def probe_commands(tmp):
    svg = os.path.join(tmp, "probe.svg")
    with open(svg, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20">'
                '<text x="1" y="15">p</text></svg>')
    pgdata = os.path.join(tmp, "pg")
    pgbin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    initdb = os.path.join(pgbin[-1], "initdb") if pgbin else "initdb"
    chromium = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", f"--user-data-dir={tmp}/chromium", "--dump-dom", "file://" + svg]
    pg = (["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []) + \
        [initdb, "-D", pgdata, "-A", "trust", "--no-sync"]
    return [
        ("rsvg-convert", ["rsvg-convert", "-o", os.path.join(tmp, "p.png"), svg]),
        ("chromium", ["timeout", "60"] + chromium),
        ("postgres", pg),
        ("clinfo", ["clinfo", "-l"]),
        ("clpeak", ["timeout", "20", "clpeak", "--help"]),
        ("hashcat", ["env", "HOME=" + tmp, "XDG_DATA_HOME=" + tmp, "timeout", "20", "hashcat", "--version"]),
        ("clblast", ["sh", "-c", "cd '%s' && exec timeout 60 clblast_tuner_xdot -precision 32 -runs 1 -n 65536" % tmp]),
        ("pyopencl", ["timeout", "60", "/usr/bin/python3", "-c", "import pyopencl, numpy"]),
        ("ffmpeg", ["timeout", "60", "ffmpeg", "-hide_banner", "-loglevel", "error", "-init_hw_device", "opencl=ocl",
                    "-filter_hw_device", "ocl", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-t", "0.2", "-vf",
                    "format=rgba,hwupload,avgblur_opencl,hwdownload,format=rgba", "-f", "null", "-"]),
        ("perf", ["perf", "stat", "-e", "task-clock", "true"]),
        ("bpftool", ["bpftool", "version"]),
        ("qemu-user", ["qemu-aarch64", "--version"]),
        ("qemu-user-static", ["qemu-arm-static", "--version"]),
        ("qemu-system", ["qemu-system-aarch64", "--version"]),
        ("qemu-system-arm", ["qemu-system-arm", "--version"]),
        ("socat", ["socat", "-V"]),
        ("cpio", ["cpio", "--version"]),
        ("ip", ["ip", "-V"]),
        ("sqlite3", ["sqlite3", "-version"]),
        ("time", ["/usr/bin/time", "-f", "%M", "true"]),
        # issue 27: the profile views' tests compile a C++ program, split its debug file and read pprof
        ("g++", ["g++", "--version"]),
        ("objcopy", ["objcopy", "--version"]),
        ("go-pprof", ["env", "HOME=" + tmp, "GOCACHE=" + os.path.join(tmp, "gocache"), "timeout", "60",
                      "go", "tool", "pprof", "-h"]),
    ]


def cmd_probe(argv):
    if len(argv) != 1:
        die("usage: deps-audit.py probe OUTDIR")
    outdir = argv[0]
    tmp = tempfile.mkdtemp(prefix="deps-audit-")  # under /tmp: the postgres user must reach it
    os.chmod(tmp, 0o777)
    def one(name, cmd):
        if not shutil.which(cmd[0]) and not os.path.exists(cmd[0]):
            return f"deps-audit: probe {name}: {cmd[0]} not installed (skipped; deps.sh installs it)"
        rc = subprocess.call(strace_cmd(os.path.join(outdir, f"probe-{name}.trace")) + cmd,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return f"deps-audit: probe {name}: '{' '.join(cmd[:3])}...' exited {rc}" if rc != 0 else None

    # The tools are independent (each its own trace, files and directories under tmp): they run
    # side by side, one per CPU (issue 43: one after the other, mostly single-threaded, ~2x the wall
    # time); the notes come out in the list's order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        notes = list(pool.map(lambda nc: one(*nc), probe_commands(tmp)))
    for note in notes:
        if note:
            print(note)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


# ------------------------------------------------------------------ dpkg database
DEP_ALT = re.compile(r"^\s*([A-Za-z0-9.+\-]+)(?::([a-z0-9]+))?")


def parse_deps(field):
    groups = []
    for group in field.split(","):
        alts = []
        for alt in group.split("|"):
            m = DEP_ALT.match(alt)
            if m:
                alts.append((m.group(1), m.group(2)))
        if alts:
            groups.append(alts)
    return groups


class Db:
    def __init__(self):
        fmt = ("${db:Status-Abbrev}\t${Package}\t${Architecture}\t${Essential}\t${Priority}\t"
               "${Pre-Depends}\t${Depends}\t${Provides}\n")
        out = subprocess.run(["dpkg-query", "-W", "-f", fmt], capture_output=True,
                             text=True, check=True).stdout
        self.pkgs = {}       # (name, arch) -> (essential, priority, deps groups)
        self.by_name = {}    # name -> [(name, arch)]
        self.providers = {}  # virtual name -> [(name, arch)]
        for line in out.splitlines():
            f = line.split("\t")
            if len(f) < 8 or not f[0].startswith("ii"):
                continue
            key = (f[1], f[2])
            self.pkgs[key] = (f[3] == "yes", f[4], parse_deps(f[5]) + parse_deps(f[6]))
            self.by_name.setdefault(f[1], []).append(key)
            for prov, _ in (alts[0] for alts in parse_deps(f[7])):
                self.providers.setdefault(prov, []).append(key)

    def resolve(self, name, qual, ctx_arch):
        """Installed packages that satisfy one dependency alternative."""
        cands = self.by_name.get(name) or self.providers.get(name) or []
        if qual == "any" or not cands:
            return cands
        want = qual if qual and qual != "native" else (NATIVE if qual == "native" else ctx_arch)
        for arch in (want, "all", NATIVE):
            hit = [k for k in cands if k[1] == arch]
            if hit:
                return hit
        return cands

    def closure(self, roots):
        seen = set()
        todo = list(roots)
        while todo:
            key = todo.pop()
            if key in seen:
                continue
            seen.add(key)
            for alts in self.pkgs[key][2]:
                for name, qual in alts:
                    hit = self.resolve(name, qual, key[1])
                    if hit:
                        todo.extend(hit)
                        break
        return seen

    def base(self):
        return [k for k, (ess, prio, _) in self.pkgs.items() if ess or prio == "required"]

    def root(self, spec):
        name, _, arch = spec.partition(":")
        hit = self.resolve(name, arch or None, arch or NATIVE)
        if not hit:
            die(f"FAIL: '{spec}' from scripts/deps.sh is not installed here (run scripts/deps.sh)", 1)
        return hit


def file_owners():
    owners = {}
    for lst in glob.glob("/var/lib/dpkg/info/*.list"):
        base = os.path.basename(lst)[:-5]
        name, _, arch = base.partition(":")
        with open(lst, errors="replace") as f:
            for path in f:
                owners.setdefault(path.rstrip("\n"), []).append((name, arch or None))
    return owners


def path_variants(path):
    out = {path}
    for p in list(out) + [os.path.realpath(path)]:
        out.add(p)
        for top in ("/lib", "/bin", "/sbin", "/lib32", "/lib64", "/libx32"):
            if p.startswith(top + "/"):
                out.add("/usr" + p)
            if p.startswith("/usr" + top + "/"):
                out.add(p[4:])
    return out


# Files a program reads because they are there, not because it needs them: drop-ins of a
# directory it scans, plugins named by a config file that their own package edits on install
# (NSS, PAM), fonts found by a font scan, Python path hooks. A package seen only through
# such files is optional: a fresh machine without it behaves the same.
OPTIONAL = [re.compile(p) for p in (
    r"^/etc/[^/]+(/[^/]+)?\.d/",                 # conf.d drop-ins: /etc/apt/apt.conf.d/, /etc/ld.so.conf.d/
    r"^/usr/share/fonts/", r"^/etc/fonts/",      # fontconfig scans whatever fonts exist
    r"/libnss_[a-z0-9]+\.so",                    # NSS modules named in nsswitch.conf by their package
    r"/security/pam_[a-z0-9_]+\.so$",            # PAM modules added by pam-auth-update
    r"^/usr/lib/python3/dist-packages/[^/]+\.pth$",  # site-packages path hooks
)]
def optional(path):
    return any(o.search(path) for o in OPTIONAL)


# ------------------------------------------------------------------ ELF (the loader's view)
# glibc's loader opens every object it maps with exactly these flags (elf/dl-load.c,
# open_verify: __open64_nocancel (name, O_RDONLY | O_CLOEXEC)); ld, libdw and the compilers
# open what they read without O_CLOEXEC, Python opens its sources with it but they are no ELF.
LOADER_FLAGS = "O_RDONLY|O_CLOEXEC"
_elf_cache = {}


def elf_info(path):
    """(DT_SONAME, [DT_NEEDED], PT_INTERP) of an ELF file, or None if it is none."""
    real = os.path.realpath(path)
    if real in _elf_cache:
        return _elf_cache[real]
    info = None
    try:
        with open(real, "rb") as f:
            if f.read(4) == b"\x7fELF":
                f.seek(0)
                elf = ELFFile(f)
                soname, needed, interp = None, [], None
                for seg in elf.iter_segments():
                    if seg["p_type"] == "PT_INTERP":
                        interp = seg.get_interp_name()
                for sec in elf.iter_sections():
                    if isinstance(sec, DynamicSection):
                        for tag in sec.iter_tags():
                            if tag.entry.d_tag == "DT_NEEDED":
                                needed.append(tag.needed)
                            elif tag.entry.d_tag == "DT_SONAME":
                                soname = tag.soname
                info = (soname, needed, interp)
    except (OSError, ELFError, ValueError):
        info = None
    _elf_cache[real] = info
    return info


def image_root(exe):
    """The ELF the kernel started for execve(exe): exe itself, or its #! interpreter."""
    try:
        with open(exe, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].split()
        return words[0].decode(errors="replace") if words else None
    return exe


def dlopened(exe, loaded):
    """The loader-opened objects of one process image (exe) that no DT_NEEDED chain from the
    image's ELF names: what the program dlopened. An unreadable image counts none as dlopened."""
    root = image_root(exe) if exe else None
    info = elf_info(root) if root else None
    if info is None:
        return set()
    by_name = {}
    for path in loaded:
        by_name.setdefault(os.path.basename(path), path)
        i = elf_info(path)
        if i and i[0]:
            by_name.setdefault(i[0], path)
    reached, todo = set(), list(info[1]) + ([info[2]] if info[2] else [])
    while todo:
        name = todo.pop()
        path = by_name.get(os.path.basename(name)) if "/" in name else by_name.get(name)
        if path is None and "/" in name:
            path = next((p for p in loaded if os.path.realpath(p) == os.path.realpath(name)), None)
        if path is None or path in reached:
            continue
        reached.add(path)
        i = elf_info(path)
        if i:
            todo.extend(i[1])
    return {p for p in loaded if p not in reached and elf_info(p) is not None}


# ------------------------------------------------------------------ traces
LINE = re.compile(r'^(\d+)\s+(openat|open|execve)\((?:AT_FDCWD, |\d+, )?"([^"]*)"(?:, ([A-Z0-9_|]+))?')
SPAWN = re.compile(r'^(\d+)\s+(?:clone3?|v?fork)\(.*\)\s+= (\d+)$')
EXIT = re.compile(r'^(\d+)\s+\+\+\+ (?:exited with|killed by) ')

# The package manager and everything it starts (maintainer scripts, triggers: mandb reads
# every man page, ldconfig, update-alternatives, apt-listchanges, ...) open files because
# they are installing, not because the project uses them (issue 23: man-db on a standard
# system). Files opened by a process below one of these are not counted.
INSTALLERS = {"apt", "apt-get", "aptitude", "dpkg", "unattended-upgrade"}


class Proc:
    """One life of a pid in a trace: its parent, what it runs, its process images (the path
    each execve started; a child without one runs its parent's), what it opened (path, the
    program then, whether that program was the package manager, the image, whether the
    dynamic loader's flags opened it)."""
    __slots__ = ("parent", "prog", "installer", "spawned_by_installer", "opens", "images")

    def __init__(self):
        self.parent, self.prog, self.installer, self.spawned_by_installer = None, "?", False, False
        self.opens = []
        self.images = [None]

    def below_installer(self):
        """Started by the package manager, or by something it started."""
        p, depth = self, 0
        while p is not None and depth < 100000:
            if p.spawned_by_installer:
                return True
            p, depth = p.parent, depth + 1
        return False


def trace_procs(lines):
    """Every process life of one strace -f trace. A child's lines can come before the
    parent's clone/vfork line (vfork returns after the child's exec; a short child may
    even exit first), so a pid that exited stays findable until its pid shows up again."""
    live, dead, procs, root = {}, {}, [], None

    def life(pid):
        nonlocal root
        p = live.get(pid)
        if p is None:
            p = live[pid] = Proc()
            dead.pop(pid, None)
            procs.append(p)
            if root is None:
                root = p  # the traced command itself: no parent
        return p

    for line in lines:
        m = SPAWN.match(line)
        if m:
            parent, child = life(m.group(1)), m.group(2)
            c = live.get(child)
            if c is None and child in dead and dead[child].parent is None \
                    and dead[child] is not root:
                c = dead[child]  # it ran and exited before this line
            if c is None:
                c = life(child)
            c.parent, c.spawned_by_installer = parent, parent.installer
            if c.prog == "?":
                c.prog = parent.prog
            if c.images[0] is None:
                c.images[0] = parent.images[-1]
            continue
        m = EXIT.match(line)
        if m:
            p = live.pop(m.group(1), None)
            if p is not None:
                dead[m.group(1)] = p
            continue
        m = LINE.match(line)
        if not m:
            continue
        pid, call, path, flags = m.groups()
        p = life(pid)
        if call == "execve":
            p.prog = os.path.basename(path)
            p.installer = p.prog in INSTALLERS
            if p.opens or p.images[-1] is not None:
                p.images.append(None)
            p.images[-1] = path
        path = os.path.normpath(path)
        if path.startswith(AUDITED_ROOTS) and not optional(path):
            p.opens.append((path, p.prog, p.installer, len(p.images) - 1,
                            call != "execve" and flags == LOADER_FLAGS))
    return procs


def read_traces(files):
    """({path: (program that first opened it, required)} for every audited file the traces
    show, number of files only the package manager's processes opened). A file is required
    unless every process that opened it dlopened it (see dlopened())."""
    used, by_installer = {}, set()
    for tf in files:
        with open(tf, errors="replace") as f:
            procs = trace_procs(f)
        for p in procs:
            below = p.below_installer()
            loaded = {}
            for path, _, _, image, by_loader in p.opens:
                if by_loader:
                    loaded.setdefault(image, set()).add(path)
            optional_here = set()
            for image, paths in loaded.items():
                optional_here |= {(image, q) for q in dlopened(p.images[image], paths)}
            for path, prog, installer, image, _ in p.opens:
                if below or installer:
                    by_installer.add(path)
                    continue
                required = (image, path) not in optional_here
                old = used.get(path)
                if old is None or (required and not old[1]):
                    used[path] = (prog, required)
    return used, len(by_installer - used.keys())


def audit(db, owners, used, listed, hidden=()):
    """({package: (file, program)} required but not installed by `listed`, the same for the
    packages used only optionally, files, packages seen, packages in the closure). `hidden`
    packages count as absent from a fresh machine even where the closure has them."""
    roots = db.base()
    for spec in listed:
        roots += db.root(spec)
    have = {k for k in db.closure(roots) if k[0] not in hidden}
    have_names = {(n, a) for n, a in have} | {(n, None) for n, _ in have}
    missing, optional_pkgs, nfiles, seen = {}, {}, 0, set()
    for path, (program, required) in sorted(used.items()):
        if os.path.isdir(path):
            continue
        found = False
        for v in path_variants(path):
            own = owners.get(v)
            if not own:
                continue
            found = True
            seen.update(own)
            if not any(o in have_names for o in own):
                # a multiarch file (a header of :amd64 and :arm64): named by the native owner
                first = min(own, key=lambda o: o[1] not in (NATIVE, "all", None))
                (missing if required else optional_pkgs).setdefault(first, (path, program))
        nfiles += found
    optional_pkgs = {k: v for k, v in optional_pkgs.items() if k not in missing}
    return missing, optional_pkgs, nfiles, len(seen), len(have)


def fail_lines(missing):
    for (name, arch), (path, program) in sorted(missing.items(), key=lambda kv: kv[0][0]):
        spec = name + (f":{arch}" if arch and arch not in (NATIVE, "all") else "")
        yield (f"deps-audit: FAIL: {spec} is used but scripts/deps.sh does not install it "
               f"(nor anything that depends on it): {path} (opened by {program})")


def note_lines(optional_pkgs):
    for (name, arch), (path, program) in sorted(optional_pkgs.items(), key=lambda kv: kv[0][0]):
        spec = name + (f":{arch}" if arch and arch not in (NATIVE, "all") else "")
        yield (f"deps-audit: note: {spec} is not installed by scripts/deps.sh and was only dlopened "
               f"because it is here ({path} by {program}): optional, not a failure")


# Packages to drop first in the self-test: the one a fresh machine once lacked comes first.
SELF_TEST_FIRST = ["libc6-dev-arm64-cross", "libc6-dev-armhf-cross", "libprotobuf-c-dev"]


def cmd_check(argv):
    boards, without, hidden, traces, self_test = ["host"], [], [], [], False
    it = iter(argv)
    for a in it:
        if a == "--board":
            boards.append(next(it))
        elif a == "--without":
            without.append(next(it))
        elif a == "--hide":
            hidden.append(next(it))
        elif a == "--self-test":
            self_test = True
        else:
            traces.append(a)
    traces = [t for t in traces if os.path.getsize(t) > 0]
    if not traces:
        die("no trace to audit (run the build under `deps-audit.py trace`)")
    listed = []
    for b in dict.fromkeys(boards):
        out = subprocess.run([os.path.join(HERE, "deps.sh"), "--list", b], capture_output=True,
                             text=True)
        if out.returncode != 0:
            die(f"deps.sh --list {b} failed: {out.stderr.strip()}")
        listed += out.stdout.split()
    listed = list(dict.fromkeys(listed))
    for w in without:
        if w not in listed:
            die(f"--without {w}: not in scripts/deps.sh's list")
    listed = [p for p in listed if p not in without]

    db, owners = Db(), file_owners()
    used, n_installer = read_traces(traces)
    missing, optional_pkgs, nfiles, npkgs, nhave = audit(db, owners, used, listed, hidden)
    what = (f"{nfiles} files of {npkgs} packages from {len(traces)} traces, "
            f"boards {' '.join(dict.fromkeys(boards))}")
    if without:
        what += f", without {' '.join(without)}"
    if hidden:
        what += f", as if {' '.join(hidden)} were not installed"
    for line in note_lines(optional_pkgs):
        print(line)
    if n_installer:
        what += (f"; {n_installer} more files opened only by the package manager's processes "
                 f"({'/'.join(sorted(INSTALLERS))} and what they start) not counted")
    if missing:
        for line in fail_lines(missing):
            print(line)
        print(f"deps-audit: {len(missing)} package(s) missing from scripts/deps.sh; {what}")
        return 1
    print(f"deps-audit: ok: {what}; all in the closure of scripts/deps.sh's list "
          f"({nhave} packages with Depends/Pre-Depends and the required base)")
    if not self_test:
        return 0
    # The audit must see a dropped package: drop listed ones until one fails it.
    order = [p for p in SELF_TEST_FIRST if p in listed] + \
        [p for p in listed if p not in SELF_TEST_FIRST]
    for drop in order:
        gone = audit(db, owners, used, [p for p in listed if p != drop])[0]
        if gone:
            print(f"deps-audit: self-test ok: without {drop} in the list the audit fails:")
            print("  " + next(fail_lines(gone)))
            return 0
    print("deps-audit: self-test FAIL: dropping any one package from the list goes unnoticed "
          "(the traces show too little)")
    return 1


def main():
    if len(sys.argv) < 2:
        die(__doc__.strip().split("Usage:")[1])
    sub, argv = sys.argv[1], sys.argv[2:]
    if sub == "trace":
        return cmd_trace(argv)
    if sub == "probe":
        return cmd_probe(argv)
    if sub == "check":
        return cmd_check(argv)
    die(f"unknown subcommand '{sub}' (trace, probe, check)")


if __name__ == "__main__":
    sys.exit(main())
