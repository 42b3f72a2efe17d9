#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run a Java driver of the clients suite: jrun.sh MAINCLASS [ARGS...]
# (e.g. jrun.sh wpstat.clients.ChronicleAppend --dir /tmp/q).
# Classpath: build/clients/java/classes and every jar in build/clients/java/lib
# (make clients-build).  JAVA (default: java on PATH, else the host's JDK 17)
# and JAVA_OPTS (extra JVM flags, e.g. -DPretoucherState.headRoom=...) may be set.
#
# The JDK 17 flags, in one place.  Chronicle (chronicle-core's Jvm/UnsafeMemory,
# chronicle-bytes' MappedFile) reaches into the JDK with reflection: it needs
# these opens/exports on JDK 17 or it fails at start with
# InaccessibleObjectException (the list is Chronicle's own for Java 11+,
# docs "Java 11/17 support").  ChronicleAppend (chronicle-queue 5.22.28)
# strictly needs java.base/java.lang.reflect opened (else
# IllegalAccessException in class initialisation) and jdk.internal.ref
# exported (else an access warning); the rest cover Chronicle's other paths.  RocketMQ's store needs the sun.nio.ch export and
# java.nio opens too (DirectBuffer cleaning of MappedByteBuffer).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/clients/java
[ -d "$out/classes" ] && [ -d "$out/lib" ] ||
	{ echo "jrun.sh: $out not built (make clients-build)" >&2; exit 2; }
java=${JAVA:-}
if [ -z "$java" ]; then
	java=$(command -v java || true)
	[ -n "$java" ] || java=$(ls -d /usr/lib/jvm/java-17-openjdk-*/bin/java 2>/dev/null | head -n 1)
fi
[ -n "$java" ] || { echo "jrun.sh: no java (install openjdk-17-jdk-headless)" >&2; exit 2; }
main=$1
shift
# shellcheck disable=SC2086
exec "$java" \
	--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED \
	--add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
	--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED \
	--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED \
	--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED \
	--add-opens=java.base/java.lang=ALL-UNNAMED \
	--add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
	--add-opens=java.base/java.io=ALL-UNNAMED \
	--add-opens=java.base/java.util=ALL-UNNAMED \
	--add-opens=java.base/java.nio=ALL-UNNAMED \
	--add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
	-Dchronicle.analytics.disable=true \
	${JAVA_OPTS:-} \
	-cp "$out/classes:$out/lib/*" "$main" "$@"
