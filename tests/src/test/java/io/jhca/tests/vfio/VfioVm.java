package io.jhca.tests.vfio;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code scripts/vfio-vm} from a test: checks its prerequisites, boots the guest with a Java main of this
 * module's test class path and hands back what it printed.
 */
final class VfioVm {

    /** Off switch for the guest tests: {@code -Djhca.vfio.vm=false}. */
    static final String SWITCH = "jhca.vfio.vm";

    /** The script bounds boot (300 s) and the job (VFIO_VM_TIMEOUT); this is the outer limit of one run. */
    private static final long RUN_LIMIT_SECONDS = 420;
    private static final int JOB_TIMEOUT_SECONDS = 240;

    private VfioVm() {
    }

    /** What one guest run printed, and the JVM's exit status (or the script's, 124/125 for timeout/no boot). */
    record Run(int exitStatus, String output) {

        /** The output's lines that start with {@code prefix + " "}, without it. */
        List<String> lines(final String prefix) {
            List<String> found = new ArrayList<>();
            for (String line : output.split("\n")) {
                if (line.startsWith(prefix + " ")) {
                    found.add(line.substring(prefix.length() + 1));
                }
            }
            return found;
        }

        String tail() {
            return output.length() <= 8000 ? output : "..." + output.substring(output.length() - 8000);
        }
    }

    /**
     * Why the guest cannot run here, or null when it can: the switch, root (QEMU exports / over 9p and the guest
     * job runs as root) and QEMU on the PATH (scripts/test installs it).
     */
    static String skipReason() {
        if (!Boolean.parseBoolean(System.getProperty(SWITCH, "true"))) {
            return "vfio guest tests switched off with -D" + SWITCH + "=false";
        }
        try {
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            if (!Integer.valueOf(0).equals(uid)) {
                return "vfio guest tests need root (uid " + uid + ")";
            }
        } catch (IOException | UnsupportedOperationException e) {
            return "vfio guest tests: cannot tell the uid (" + e + ")";
        }
        if (!onPath("qemu-system-x86_64")) {
            return "vfio guest tests need qemu-system-x86_64 (Debian qemu-system-x86; scripts/test installs it)";
        }
        return null;
    }

    /**
     * Boots the guest, binds {@code binds} to vfio-pci and runs {@code mainClass} with this JVM's test class path;
     * the run's files go to {@code out}.
     */
    static Run runJava(final Path out, final List<String> binds, final String mainClass, final String... args)
            throws IOException, InterruptedException {
        return runJava(out, binds, Map.of(), mainClass, args);
    }

    /**
     * As {@link #runJava(Path, List, String, String...)}, with more of the script's environment options
     * ({@code VFIO_VM_RAM_FILE}, {@code VFIO_VM_BAR_FILE}, {@code VFIO_VM_MEM}, {@code VFIO_VM_TIMEOUT}, ...).
     */
    static Run runJava(final Path out, final List<String> binds, final Map<String, String> env, final String mainClass,
            final String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", script().toString(), "run-java"));
        for (String b : binds) {
            cmd.add("--bind");
            cmd.add(b);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        return run(out, cmd, env);
    }

    /** Builds the guest kernel and initramfs if needed (cached under target/vfio-vm). */
    static Run prepare(final Path out) throws IOException, InterruptedException {
        return run(out, List.of("bash", script().toString(), "prepare"), Map.of());
    }

    private static Run run(final Path out, final List<String> cmd, final Map<String, String> env)
            throws IOException, InterruptedException {
        Files.createDirectories(out);
        Path log = out.resolve("vfio-vm.log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("VFIO_VM_OUT", out.resolve("run").toString());
        pb.environment().put("VFIO_VM_TIMEOUT", Integer.toString(JOB_TIMEOUT_SECONDS));
        pb.environment().putAll(env);
        Process p = pb.start();
        int status;
        if (p.waitFor(RUN_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            status = p.exitValue();
        } else {
            p.destroy(); // SIGTERM: the script's trap kills QEMU and removes its files
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            status = -1;
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println(output);
        return new Run(status, output);
    }

    private static boolean onPath(final String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    /** scripts/vfio-vm of the checkout: the nearest directory upwards from the working directory holding it. */
    private static Path script() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path s = d.resolve("scripts/vfio-vm");
            if (Files.isRegularFile(s)) {
                return s;
            }
        }
        throw new IllegalStateException("scripts/vfio-vm not found above " + Path.of("").toAbsolutePath());
    }
}
