# Sourced by scripts/validate_prime_rl.sh and scripts/prime_rl_check.sh: the Python 3.12 interpreter prime-rl
# needs (its pyproject: requires-python = "~=3.12.0"), found on this machine, never downloaded.
#
#   prime_rl_python   prints the interpreter's path, or fails at once with a message naming PRIME_RL_PYTHON.
#
# PRIME_RL_PYTHON, when set, is an interpreter path or a version request (default 3.12). For a version, the
# first of: `uv python find 3.12` (uv-managed Pythons and every python3.12 on PATH; interpreters that
# do not run, such as pyenv shims of versions not selected, are skipped), then pyenv's installed 3.12 versions
# ($PYENV_ROOT/versions/3.12*/bin/python3.12). uv is never allowed to download one: its downloads come from
# GitHub, and where GitHub is unreachable uv would try for several seconds before failing.

prime_rl_python() {
    local request=${PRIME_RL_PYTHON:-} found="" candidate
    if [[ "$request" == */* ]]; then
        [ -x "$request" ] && found=$request
    else
        found=$(UV_PYTHON_DOWNLOADS=never uv python find --no-project "${request:-3.12}" 2>/dev/null) || found=""
        if [ -z "$found" ] && [[ "${request:-3.12}" == 3.12* ]]; then
            for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"${request:-3.12}"*/bin/python3.12; do
                [ -x "$candidate" ] && found=$candidate && break
            done
        fi
    fi
    local version=""
    [ -n "$found" ] && version=$("$found" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
    if [ "$version" != "3.12" ]; then
        {
            if [ -n "$found" ]; then
                echo "error: PRIME_RL_PYTHON=$request: $found is not a Python 3.12 interpreter${version:+ (it is $version)}."
            elif [[ "$request" == */* ]]; then
                echo "error: PRIME_RL_PYTHON=$request is not an executable."
            else
                echo "error: no Python ${request:-3.12} found for PRIME_RL_PYTHON${request:+=$request} (uv python find" \
                    "without downloads; pyenv versions under ${PYENV_ROOT:-$HOME/.pyenv})."
            fi
            echo "       prime-rl needs Python 3.12 (requires-python ~=3.12.0). Set PRIME_RL_PYTHON to a python3.12"
            echo "       executable, or install one (uv python install 3.12, which downloads from GitHub; your OS"
            echo "       packages; pyenv install 3.12)."
        } >&2
        return 1
    fi
    echo "$found"
}
