package io.jhca.benchmarks.ab;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Two builds of one benchmark in one JVM, timed in alternation: each build's classes in a class loader of their
 * own, the benchmark's {@code block()} (1000 operations) called on one build then the other, round after round,
 * and the medians compared. On a shared machine whose speed drifts by tens of percent between runs, and with JIT
 * outcomes that differ from fork to fork, two separate JMH runs cannot resolve a 10% change; alternating blocks in
 * one process puts both builds under the same drift. {@code scripts/bench-ab} builds the older revision and runs
 * this.
 *
 * <p>Arguments: {@code CLASS PARAMS ROUNDS DIRS_A DIRS_B [PROPS_A PROPS_B]}: the benchmark class, its parameters as
 * {@code field=value} separated by commas, the number of blocks per build, each build's class directories
 * separated by the path separator, and system properties ({@code key=value}, separated by {@code ;}) set while
 * each build's instance is set up (two devices of the same name need distinct addresses, say).
 */
public final class AlternatingBuilds {
    private AlternatingBuilds() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            throw new IllegalArgumentException("usage: CLASS PARAMS ROUNDS DIRS_A DIRS_B [PROPS_A PROPS_B]");
        }
        String className = args[0];
        String params = args[1];
        int rounds = Integer.parseInt(args[2]);
        String[] dirs = {args[3], args[4]};
        String[] props = {args.length > 5 ? args[5] : "", args.length > 6 ? args[6] : ""};
        Object[] bench = new Object[2];
        Method[] block = new Method[2];
        for (int side = 0; side < 2; side++) {
            ClassLoader loader = new URLClassLoader(urls(dirs[side]), AlternatingBuilds.class.getClassLoader());
            setProperties(props[side]);
            Class<?> c = Class.forName(className, true, loader);
            Object b = c.getConstructor().newInstance();
            assign(c, b, params);
            call(c, b, Setup.class);
            bench[side] = b;
            block[side] = c.getMethod("block");
        }
        // both builds' objects to the old generation, where a long-running application's driver objects live: a GC
        // write barrier that is cheap only for young objects then costs what it costs there
        System.gc();
        long sink = 0;
        for (int warm = 0; warm < Math.max(200, rounds / 5); warm++) {
            for (int side = 0; side < 2; side++) {
                sink += (long) block[side].invoke(bench[side]);
            }
        }
        double[][] nsPerOp = new double[2][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < 2; k++) {
                int side = (r & 1) == 0 ? k : 1 - k;   // each build goes first in half the rounds
                long t0 = System.nanoTime();
                sink += (long) block[side].invoke(bench[side]);
                nsPerOp[side][r] = (System.nanoTime() - t0) / 1000.0;
            }
        }
        for (int side = 0; side < 2; side++) {
            Class<?> c = bench[side].getClass();
            call(c, bench[side], TearDown.class);
        }
        System.out.printf("%s %s, %d blocks of 1000 operations per build, ns per operation:%n", className, params, rounds);
        double[] median = new double[2];
        for (int side = 0; side < 2; side++) {
            double[] t = nsPerOp[side];
            Arrays.sort(t);
            median[side] = t[rounds / 2];
            System.out.printf("  %s  p25 %.1f  median %.1f  p75 %.1f%n", side == 0 ? "A" : "B", t[rounds / 4], median[side],
                    t[3 * rounds / 4]);
        }
        System.out.printf("  B/A %.3f (checksum %d)%n", median[1] / median[0], sink & 0xff);
    }

    private static URL[] urls(String dirs) throws Exception {
        List<URL> out = new ArrayList<>();
        for (String d : dirs.split(java.io.File.pathSeparator)) {
            out.add(Path.of(d).toUri().toURL());
        }
        return out.toArray(new URL[0]);
    }

    private static void setProperties(String props) {
        for (String p : props.split(";")) {
            int eq = p.indexOf('=');
            if (eq > 0) {
                System.setProperty(p.substring(0, eq), p.substring(eq + 1));
            }
        }
    }

    /** The given parameters, and every other {@code @Param} field at its first value, as JMH would. */
    private static void assign(Class<?> c, Object b, String params) throws Exception {
        for (Field f : c.getFields()) {
            Param p = f.getAnnotation(Param.class);
            if (p != null && p.value().length > 0) {
                set(f, b, p.value()[0]);
            }
        }
        for (String p : params.split(",")) {
            if (p.isEmpty()) {
                continue;
            }
            String[] kv = p.split("=", 2);
            set(c.getField(kv[0]), b, kv[1]);
        }
    }

    private static void set(Field f, Object b, String value) throws Exception {
        f.set(b, f.getType() == int.class ? (Object) Integer.valueOf(value) : value);
    }

    private static void call(Class<?> c, Object b, Class<? extends java.lang.annotation.Annotation> marker)
            throws Exception {
        for (Method m : c.getMethods()) {
            if (m.isAnnotationPresent(marker)) {
                m.invoke(b);
            }
        }
    }
}
