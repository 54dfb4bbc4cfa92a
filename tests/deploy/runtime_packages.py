"""deploy.runtime_packages: deploy/Dockerfile's package lists match what the binary needs.

    runtime_packages.py BINARY DOCKERFILE QUICKSTART

- BUILD_PACKAGES (the build stage) is the same set as deploy/quickstart.sh's packages.
- RUNTIME_PACKAGES (the debian:bookworm-slim stage) provides every shared library the built binary
  loads: the package (dpkg -S) of each library the binary names (NEEDED) is listed; every other
  library ldd resolves belongs to a listed package or to one apt installs with them (their
  Depends/Pre-Depends, followed through the installed packages).
- No listed runtime package is unneeded: each provides a library the binary names itself (NEEDED).
Docker cannot run on the build machines, so this is how the image's runtime stage is checked.
"""
import os
import re
import subprocess
import sys


def arg_list(dockerfile, name):
    m = re.search(r'^ARG %s="([^"]*)"' % name, open(dockerfile).read(), re.M)
    if not m:
        sys.exit("%s: no ARG %s=\"...\"" % (dockerfile, name))
    return set(m.group(1).split())


def quickstart_packages(path):
    m = re.search(r"^packages=\(([^)]*)\)", open(path).read(), re.M)
    if not m:
        sys.exit("%s: no packages=(...) array" % path)
    return set(m.group(1).split())


def candidates(lib):
    """The spellings dpkg may know `lib` (a path ldd printed) by: as given, its real path, and their
    /lib <-> /usr/lib twins (bookworm is merged-/usr; dpkg records one spelling)."""
    out = [lib, os.path.realpath(lib)]
    for c in list(out):
        if c.startswith("/usr/lib/"):
            out.append(c[len("/usr"):])
        elif c.startswith("/lib/") or c.startswith("/lib64/"):
            out.append("/usr" + c)
    return out


def owners(libs):
    """path -> package, by one dpkg -S over every spelling of every library."""
    paths = sorted({c for lib in libs for c in candidates(lib)})
    r = subprocess.run(["dpkg", "-S"] + paths, capture_output=True, text=True)
    by_path = {}
    for line in r.stdout.splitlines():
        pkg, _, path = line.partition(": ")
        if "diversion" not in pkg and path in paths:
            by_path[path] = pkg.split(":")[0].split(",")[0].strip()
    return {lib: next((by_path[c] for c in candidates(lib) if c in by_path), None) for lib in libs}


def ldd(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = {}  # soname -> path
    for line in out.splitlines():
        line = line.strip()
        m = re.match(r"(\S+) => (\S+) \(0x", line)
        if m:
            libs[m.group(1)] = m.group(2)
        elif "=>" not in line and line.startswith("/"):
            libs[os.path.basename(line.split()[0])] = line.split()[0]  # the dynamic loader
        elif "not found" in line:
            sys.exit("ldd: %s" % line)
    return libs


def needed(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))


def depends_closure(packages):
    """The packages and, recursively, their installed Depends/Pre-Depends (alternatives: the
    installed ones), from one dpkg-query over every installed package."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Status}\t${Pre-Depends}, ${Depends}\n"],
                         capture_output=True, text=True, check=True).stdout
    deps = {}
    for line in out.splitlines():
        name, status, dep = (line.split("\t") + ["", ""])[:3]
        if "install ok installed" in status:
            deps[name] = [alt.strip().split(" ")[0].split(":")[0] for clause in dep.split(",") for alt in clause.split("|")]
    seen, todo = set(), list(packages)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(d for d in deps.get(p, []) if d in deps)
    return seen


def main():
    binary, dockerfile, quickstart = sys.argv[1:4]
    problems = []
    build, qs = arg_list(dockerfile, "BUILD_PACKAGES"), quickstart_packages(quickstart)
    if build != qs:
        problems.append("BUILD_PACKAGES differs from quickstart.sh: only in the Dockerfile %s, only in quickstart %s"
                        % (sorted(build - qs), sorted(qs - build)))
    runtime = arg_list(dockerfile, "RUNTIME_PACKAGES")
    libs = ldd(binary)
    direct = needed(binary)
    closure = depends_closure(runtime)
    direct_owners = set()
    owner = owners(libs.values())
    for soname, path in sorted(libs.items()):
        pkg = owner[path]
        if pkg is None:
            problems.append("%s (%s): no Debian package ships it (dpkg -S)" % (soname, path))
            continue
        if soname in direct:
            direct_owners.add(pkg)
        where = "listed" if pkg in runtime else "a dependency" if pkg in closure else None
        if soname in direct and pkg not in runtime:
            problems.append("%s (%s) is NEEDED by the binary itself: list %s in RUNTIME_PACKAGES" % (soname, path, pkg))
        elif where is None:
            problems.append("%s (%s) is in %s, which RUNTIME_PACKAGES neither lists nor pulls in" % (soname, path, pkg))
        else:
            print("%-32s %-22s %s" % (soname, pkg, where))
    for soname in sorted(direct - set(libs)):
        problems.append("%s: NEEDED by the binary but not resolved by ldd" % soname)
    for pkg in sorted(runtime - direct_owners):
        problems.append("RUNTIME_PACKAGES lists %s, which ships no library the binary names (NEEDED)" % pkg)
    for p in problems:
        print("PROBLEM:", p)
    if problems:
        sys.exit("%d problem(s)" % len(problems))
    print("ok: %d libraries from %d listed packages and their dependencies" % (len(libs), len(runtime)))


if __name__ == "__main__":
    main()
