#!/usr/bin/env bash
# Temporal's time-skipping test server (Java, io.temporal:temporal-test-server), pinned, installed into .tools once.
#
# Usage: bash test/workflow/support/time-skipping-server.sh
#          prints the path of an executable that starts the server: `<executable> PORT`, as the SDK's test
#          environment runs it (`server.executable: { type: 'existing-path' }`).
# Nothing is downloaded again while the stamp matches the pin; a changed pin reinstalls. The SDK's own download of
# the server is a prebuilt binary from outside the package registries, which these machines cannot reach.
# The server runs on the Java that TEMPORAL_TEST_SERVER_JAVA_HOME, then JAVA_HOME, then PATH gives (8 or newer).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"

version=1.32.1
# The server logs through SLF4J 1.7; without a binding it prints a warning on every start.
slf4j_version=1.7.36
install_dir="$root/.tools/temporal-test-server"
stamp="$install_dir/.temporal-test-server.version"
executable="$install_dir/temporal-test-server"
# Maven's local repository is the one the registry and Keycloak scripts share, so nothing is downloaded twice.
maven_repo="$root/.tools/m2"

install() {
  if [[ -x "$executable" && "$(cat "$stamp" 2>/dev/null)" == "$version $slf4j_version" ]]; then
    return 0
  fi
  if ! command -v mvn >/dev/null; then
    echo "time-skipping server: Maven (mvn) is needed to download io.temporal:temporal-test-server" >&2
    exit 1
  fi
  echo "time-skipping server: installing io.temporal:temporal-test-server $version into .tools/" >&2
  mkdir -p "$maven_repo" "$root/.tools"
  local scratch
  scratch="$(mktemp -d "$root/.tools/temporal-test-server-install.XXXXXX")"
  # A project whose only dependency is the server: Maven resolves its runtime classpath into lib/.
  cat >"$scratch/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.bus-booking</groupId>
  <artifactId>temporal-test-server-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>$version</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-nop</artifactId>
      <version>$slf4j_version</version>
    </dependency>
  </dependencies>
</project>
EOF
  # -C: a download whose checksum does not match Maven Central's fails instead of being installed.
  if ! mvn -B -C -f "$scratch/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$scratch/lib" -Dmaven.repo.local="$maven_repo" >"$scratch/maven.log" 2>&1; then
    tail -n 30 "$scratch/maven.log" >&2
    echo "time-skipping server: Maven could not resolve temporal-test-server $version (its output is above)" >&2
    rm -rf "$scratch"
    exit 1
  fi
  # Found at run time, not baked in: .tools may be shared by several checkouts of the project. exec, so the SDK's
  # stop signal reaches the JVM itself.
  cat >"$scratch/temporal-test-server" <<'EOF'
#!/usr/bin/env bash
here="$(dirname "$(readlink -f "$0")")"
java_home="${TEMPORAL_TEST_SERVER_JAVA_HOME:-${JAVA_HOME:-}}"
java="${java_home:+$java_home/bin/}java"
exec "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$here/lib/*" io.temporal.testserver.TestServer "$@"
EOF
  chmod +x "$scratch/temporal-test-server"
  rm -rf "$install_dir"
  mv "$scratch" "$install_dir"
  echo "$version $slf4j_version" >"$stamp"
}

install
echo "$executable"
