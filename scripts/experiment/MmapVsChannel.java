// MappedByteBuffer versus FileChannel, one JVM, every unit size in turn:
// put() or write() the whole file unit by unit.
//
//   java MmapVsChannel.java --file PATH --size BYTES --api mmap|channel
//        --op write|read [--cache warm|cold] [--units 64,4096,...]
//        [--repeat N] [--method original|kernel] [--generation G]
//
// --method original (the analysis' benchmark): force() is not called inside
// the timed region (nor after it: the driver syncs the file later); a warm
// MappedByteBuffer is load()ed and then written once over before the timed
// pass, so its PTEs are writable and dirty and the pass takes no fault; a
// cold file is a fresh sparse file the driver made.  --method kernel
// (default): put()/write() then force(), timed together; warm is load()
// only (read-only PTEs: every first put() to a page faults); a cold file is
// an existing one the driver evicted.
//
// Run it under `wpstat run` for the process's kernel counters.  It also reads
// the file's row of /proc/wpstat/inodes around every unit size, matched by
// device, inode and (with --generation, which the driver reads with lsattr
// -v: Java cannot) generation, so that a deleted file's row with a reused
// inode number is never taken for this one, and prints one JSON object per
// line.
//
// Cold cache: Java cannot call posix_fadvise or make a sparse file without
// writing, so the driver makes the file cold before the JVM starts and only
// the first unit size can be cold; --cache cold therefore takes exactly one
// unit size.

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class MmapVsChannel {
    static final String INODES = "/proc/wpstat/inodes";

    public static void main(String[] args) throws Exception {
        String file = null, api = null, op = null, cache = "warm", method = "kernel";
        long size = 0, generation = -1;
        int repeat = 1;
        List<Long> units = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--file": file = v; i++; break;
                case "--size": size = parseBytes(v); i++; break;
                case "--api": api = v; i++; break;
                case "--op": op = v; i++; break;
                case "--cache": cache = v; i++; break;
                case "--method": method = v; i++; break;
                case "--generation": generation = parseBytes(v); i++; break;
                case "--repeat": repeat = (int) parseBytes(v); i++; break;
                case "--units":
                    for (String u : v.split(","))
                        units.add(parseBytes(u));
                    i++;
                    break;
                default: usage("unknown argument '" + a + "'");
            }
        }
        if (file == null || size <= 0)
            usage("--file and --size are required");
        if (!"mmap".equals(api) && !"channel".equals(api))
            usage("--api must be mmap or channel");
        if (!"write".equals(op) && !"read".equals(op))
            usage("--op must be write or read");
        if (!"warm".equals(cache) && !"cold".equals(cache))
            usage("--cache must be warm or cold");
        if (!"original".equals(method) && !"kernel".equals(method))
            usage("--method must be original or kernel");
        boolean original = "original".equals(method);
        if (units.isEmpty())
            units.add(4096L);
        if ("cold".equals(cache) && (units.size() != 1 || repeat != 1))
            usage("--cache cold takes exactly one unit size, once");
        if (repeat < 1)
            usage("--repeat must be at least 1");
        if (size > Integer.MAX_VALUE)
            usage("--size: one MappedByteBuffer maps at most 2 GiB - 1");

        Path path = Paths.get(file);
        long dev = ((Number) Files.getAttribute(path, "unix:dev")).longValue();
        long ino = ((Number) Files.getAttribute(path, "unix:ino")).longValue();
        if (Files.size(path) != size)
            usage(file + " is not --size bytes long (the driver creates it)");

        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ,
                                               StandardOpenOption.WRITE)) {
            // Let the JIT compile the loops first (on the first MiB, not
            // reported) so that the first unit size is not timed interpreted.
            // A cold run skips it: it would bring pages into the cache.
            if ("warm".equals(cache)) {
                long jit = Math.min(size, 1L << 20);
                for (int i = 0; i < 3; i++) {
                    for (int u : new int[] { 64, 4096 }) {
                        if ("mmap".equals(api))
                            mmap(map(ch, jit, op, false, false), jit, u, op, false);
                        else
                            channel(ch, jit, u, op, false);
                    }
                }
                // Clean again what it dirtied: the first unit size of either
                // method starts from a clean file.
                if ("write".equals(op))
                    ch.force(false);
            }
            for (int round = 1; round <= repeat; round++)
            for (long unit : units) {
                if (unit > size) {
                    System.out.printf("{\"api\": \"%s\", \"op\": \"%s\", \"unit\": %d, "
                                      + "\"round\": %d, \"skipped\": \"unit larger than the file\"}%n",
                                      api, op, unit, round);
                    continue;
                }
                boolean warm = "warm".equals(cache);
                if (warm && "channel".equals(api))
                    warm(ch, size);
                // The original method's warm mapping is made (and written
                // over once) before the counters are read: the timed pass
                // alone is measured.
                MappedByteBuffer mb = null;
                if ("mmap".equals(api))
                    mb = map(ch, size, op, warm, original);
                Map<String, Long> before = counters(dev, ino, generation);
                long[] t = "mmap".equals(api) ? mmap(mb, size, (int) unit, op, !original)
                                              : channel(ch, size, (int) unit, op, !original);
                Map<String, Long> after = counters(dev, ino, generation);
                StringBuilder sb = new StringBuilder();
                sb.append(String.format("{\"api\": \"%s\", \"op\": \"%s\", \"cache\": \"%s\", "
                                        + "\"method\": \"%s\", \"unit\": %d, \"size\": %d, \"round\": %d, \"ns\": %d, "
                                        + "\"force_ns\": %d, \"counters\": ",
                                        api, op, cache, method, unit, size, round, t[0], t[1]));
                if (before == null || after == null) {
                    sb.append("null");
                } else {
                    sb.append('{');
                    String sep = "";
                    for (Map.Entry<String, Long> e : after.entrySet()) {
                        long b = before.getOrDefault(e.getKey(), 0L);
                        sb.append(sep).append('"').append(e.getKey()).append("\": ")
                          .append(e.getValue() - b);
                        sep = ", ";
                    }
                    sb.append('}');
                }
                sb.append('}');
                System.out.println(sb);
            }
        }
    }

    // The buffer of one unit size's pass.  Warm: load()ed first (a read of
    // every page: the PTEs are present but read-only, so the first put() to
    // a page still faults) and, for the original method's writes, written
    // over once, so that no page is left to fault; not timed.
    static MappedByteBuffer map(FileChannel ch, long size, String op, boolean warm,
                                boolean original) throws IOException {
        FileChannel.MapMode mode = "write".equals(op) ? FileChannel.MapMode.READ_WRITE
                                                      : FileChannel.MapMode.READ_ONLY;
        MappedByteBuffer mb = ch.map(mode, 0, size);
        if (warm)
            mb.load();
        if (warm && original && "write".equals(op)) {
            for (int pos = 0; pos < size; pos += 4096)
                mb.put(pos, (byte) 'w');
        }
        return mb;
    }

    // MappedByteBuffer.put of unit-sized arrays, then force() if asked (it
    // is then timed with the puts); or get().  Returns {ns, force ns}.
    static long[] mmap(MappedByteBuffer mb, long size, int unit, String op, boolean force)
            throws IOException {
        byte[] buf = new byte[unit];
        java.util.Arrays.fill(buf, (byte) 'j');
        long sink = 0, forceNs = 0, t0 = System.nanoTime();
        mb.clear();
        for (long pos = 0; pos < size; pos += unit) {
            int n = (int) Math.min(unit, size - pos);
            if ("write".equals(op)) {
                mb.put(buf, 0, n);
            } else {
                mb.get(buf, 0, n);
                sink += buf[0];
            }
        }
        if ("write".equals(op) && force) {
            long f0 = System.nanoTime();
            mb.force();
            forceNs = System.nanoTime() - f0;
        }
        long ns = System.nanoTime() - t0;
        if (sink == 42)
            System.err.print("");	// keep the reads alive
        return new long[] { ns, forceNs };
    }

    // FileChannel.write of a unit-sized direct buffer, then force(false) if
    // asked (timed with the writes); or read().
    static long[] channel(FileChannel ch, long size, int unit, String op, boolean force)
            throws IOException {
        ByteBuffer bb = ByteBuffer.allocateDirect(unit);
        while (bb.hasRemaining())
            bb.put((byte) 'j');
        long forceNs = 0, t0 = System.nanoTime();
        for (long pos = 0; pos < size; pos += unit) {
            bb.clear();
            bb.limit((int) Math.min(unit, size - pos));
            long off = pos;
            while (bb.hasRemaining()) {
                int n = "write".equals(op) ? ch.write(bb, off) : ch.read(bb, off);
                if (n < 0)
                    throw new IOException("unexpected end of file at " + off);
                off += n;
            }
        }
        if ("write".equals(op) && force) {
            long f0 = System.nanoTime();
            ch.force(false);
            forceNs = System.nanoTime() - f0;
        }
        return new long[] { System.nanoTime() - t0, forceNs };
    }

    // Warm cache for FileChannel: the file in the page cache.
    static void warm(FileChannel ch, long size) throws IOException {
        MappedByteBuffer mb = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
        mb.load();
    }

    // The file's row of /proc/wpstat/inodes: column name -> value, or null
    // if the module is not loaded.  Columns that read "-" are left out, and
    // so is subvol, a key column (the experiment's files are on ext4).  A
    // generation < 0 matches any (the newest row wins).
    static Map<String, Long> counters(long dev, long ino, long gen) {
        List<String> lines;
        try {
            lines = Files.readAllLines(Paths.get(INODES));
        } catch (IOException e) {
            return null;
        }
        if (lines.isEmpty())
            return null;
        String[] names = lines.get(0).trim().split("\\s+");
        String devs = (dev >>> 8 & 0xfff | (dev >>> 32 & ~0xfffL)) + ":"
                      + (dev & 0xff | (dev >>> 12 & ~0xffL));
        Map<String, Long> row = new LinkedHashMap<>();
        for (int i = 3; i < names.length; i++)
            if (!names[i].equals("subvol"))
                row.put(names[i], 0L);	// no row yet: all zero
        for (String l : lines.subList(1, lines.size())) {
            String[] f = l.trim().split("\\s+");
            if (f.length != names.length || !f[0].equals(devs)
                || !f[1].equals(Long.toString(ino))
                || (gen >= 0 && !f[2].equals(Long.toString(gen))))
                continue;
            for (int i = 3; i < f.length; i++) {
                if (names[i].equals("subvol"))
                    continue;
                if (f[i].equals("-"))
                    row.remove(names[i]);
                else
                    row.put(names[i], Long.parseLong(f[i]));
            }
        }
        return row;
    }

    static long parseBytes(String s) {
        if (s == null)
            usage("missing value");
        long mul = 1;
        char c = Character.toUpperCase(s.charAt(s.length() - 1));
        if (c == 'K' || c == 'M' || c == 'G') {
            mul = c == 'K' ? 1L << 10 : c == 'M' ? 1L << 20 : 1L << 30;
            s = s.substring(0, s.length() - 1);
        }
        try {
            return Long.parseLong(s) * mul;
        } catch (NumberFormatException e) {
            usage("'" + s + "' is not a size");
            return 0;
        }
    }

    static void usage(String msg) {
        System.err.println("MmapVsChannel: " + msg);
        System.err.println("usage: java MmapVsChannel.java --file PATH --size BYTES "
                           + "--api mmap|channel --op write|read [--cache warm|cold] "
                           + "[--units 64,4096,...] [--repeat N] [--method original|kernel] "
                           + "[--generation G]");
        System.exit(2);
    }
}
