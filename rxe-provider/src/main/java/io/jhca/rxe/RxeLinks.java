package io.jhca.rxe;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The rxe devices a user created on network interfaces, as {@code rdma link add NAME type rxe netdev IFACE} creates
 * them in the kernel: a file of lines {@code NAME netdev IFACE} ({@code #} starts a comment) that the rxe provider
 * reads whenever it lists or opens devices. It lives where a user's configuration belongs:
 * {@code $XDG_CONFIG_HOME/jhca/rxe-links}, else {@code ~/.config/jhca/rxe-links}; system property
 * {@value #FILE_PROPERTY} or environment variable {@value #FILE_ENV} name another file.
 *
 * <p>Devices configured by {@link RxeDeviceConfig#DEVICES_PROPERTY} / {@link RxeDeviceConfig#DEVICES_ENV} (or the
 * default loopback pair) win: a line naming one of them is ignored.
 */
public final class RxeLinks {

    /** System property naming the file. */
    public static final String FILE_PROPERTY = "jhca.rxe.links";
    /** Environment variable naming the file, used when the property is absent. */
    public static final String FILE_ENV = "JHCA_RXE_LINKS";

    /** One line: a device on an interface. */
    public record Link(String name, String netdev) {
    }

    private final Path file;

    public RxeLinks(final Path file) {
        this.file = file;
    }

    /** The file the property, the environment or the XDG rules name. */
    public static RxeLinks fromEnvironment() {
        String f = System.getProperty(FILE_PROPERTY);
        if (f == null || f.isBlank()) {
            f = System.getenv(FILE_ENV);
        }
        if (f != null && !f.isBlank()) {
            return new RxeLinks(Path.of(f));
        }
        final String xdg = System.getenv("XDG_CONFIG_HOME");
        final Path base = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute() ? Path.of(xdg)
                : Path.of(System.getProperty("user.home"), ".config"); // XDG Base Directory: relative values are ignored
        return new RxeLinks(base.resolve("jhca").resolve("rxe-links"));
    }

    public Path file() {
        return file;
    }

    /** The devices in the file, in its order; none when it does not exist. */
    public List<Link> read() {
        if (!Files.exists(file)) {
            return List.of();
        }
        final List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (final IOException e) {
            throw new IllegalStateException("cannot read the rxe link file " + file + ": " + e.getMessage(), e);
        }
        final List<Link> out = new ArrayList<>();
        int n = 0;
        for (final String raw : lines) {
            n++;
            final int hash = raw.indexOf('#');
            final String line = (hash >= 0 ? raw.substring(0, hash) : raw).trim();
            if (line.isEmpty()) {
                continue;
            }
            final String[] w = line.split("\\s+");
            if (w.length != 3 || !w[1].equals("netdev")) {
                throw new IllegalStateException(file + " line " + n + ": '" + line + "' is not NAME netdev IFACE"
                        + " (fix or delete the line, or use hwlab link delete NAME)");
            }
            out.add(new Link(w[0], w[2]));
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * Adds device {@code name} on interface {@code netdev}, as {@code rdma link add}: refused when the interface does
     * not exist or has no IP address, when the name is taken (by the file or by {@code configured}, the devices of
     * the property, the environment or the defaults), or when the interface already has a device or one of its
     * addresses is another device's address. Each refusal says what to do.
     */
    public Link add(final String name, final String netdev, final List<RxeDeviceConfig> configured) {
        checkName(name);
        final NetworkInterface nif;
        try {
            nif = NetworkInterface.getByName(netdev);
        } catch (final SocketException e) {
            throw new IllegalArgumentException("cannot read network interface '" + netdev + "': " + e.getMessage(), e);
        }
        if (nif == null) {
            throw new IllegalArgumentException("no network interface named '" + netdev + "' (" + interfaces()
                    + "; ip link shows them)");
        }
        final List<InetAddress> addresses = Collections.list(nif.getInetAddresses());
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("network interface '" + netdev + "' has no IP address: give it one"
                    + " (ip address add ADDR/LEN dev " + netdev + ") and add the device again");
        }
        final List<Link> links = new ArrayList<>(read());
        for (final Link l : links) {
            if (l.name().equals(name)) {
                throw new IllegalArgumentException("rxe device " + name + " already exists (on " + l.netdev()
                        + "): choose another name, e.g. " + freeName(links, configured) + ", or hwlab link delete "
                        + name + " first");
            }
            if (l.netdev().equals(netdev)) {
                throw new IllegalArgumentException("network interface " + netdev + " already has rxe device "
                        + l.name() + " (one device per interface, as Linux rxe): use " + l.name()
                        + ", or hwlab link delete " + l.name() + " first");
            }
        }
        for (final RxeDeviceConfig c : configured) {
            if (c.name().equals(name)) {
                throw new IllegalArgumentException("rxe device name " + name + " is taken by " + c.name() + " on "
                        + (c.netdev() != null ? c.netdev() : c.address().getHostAddress()) + " (from "
                        + RxeDeviceConfig.DEVICES_PROPERTY + ", " + RxeDeviceConfig.DEVICES_ENV
                        + " or the defaults): choose another name, e.g. " + freeName(links, configured));
            }
            if (netdev.equals(c.netdev())) {
                throw new IllegalArgumentException("network interface " + netdev + " already has rxe device "
                        + c.name() + " (from " + RxeDeviceConfig.DEVICES_PROPERTY + " or " + RxeDeviceConfig.DEVICES_ENV
                        + "): use " + c.name());
            }
            if (c.netdev() == null && addresses.contains(c.address())) {
                throw new IllegalArgumentException("address " + c.address().getHostAddress() + " of " + netdev
                        + " is already rxe device " + c.name() + "'s (both would bind it on UDP port 4791): use "
                        + c.name() + ", or configure " + RxeDeviceConfig.DEVICES_PROPERTY + "/"
                        + RxeDeviceConfig.DEVICES_ENV + " without it");
            }
        }
        final Link added = new Link(name, netdev);
        links.add(added);
        write(links);
        return added;
    }

    /** Deletes device {@code name} from the file, as {@code rdma link delete}; refused when it is not there. */
    public Link delete(final String name, final List<RxeDeviceConfig> configured) {
        final List<Link> links = new ArrayList<>(read());
        for (int i = 0; i < links.size(); i++) {
            if (links.get(i).name().equals(name)) {
                final Link gone = links.remove(i);
                write(links);
                return gone;
            }
        }
        for (final RxeDeviceConfig c : configured) {
            if (c.name().equals(name)) {
                throw new IllegalArgumentException("rxe device " + name + " comes from " + RxeDeviceConfig.DEVICES_PROPERTY
                        + ", " + RxeDeviceConfig.DEVICES_ENV + " or the defaults, not from " + file
                        + ": change that setting instead");
            }
        }
        final List<String> names = new ArrayList<>();
        links.forEach(l -> names.add(l.name()));
        throw new IllegalArgumentException("no rxe device " + name + " in " + file
                + (names.isEmpty() ? " (it has none)" : " (it has " + String.join(", ", names) + ")"));
    }

    private static void checkName(final String name) {
        if (name == null || !name.matches("[A-Za-z0-9_.:-]{1,63}")) {
            throw new IllegalArgumentException("rxe device name '" + name + "' must be 1 to 63 letters, digits or"
                    + " _ . : - (e.g. rxe2)");
        }
    }

    /** The first rxeN that neither the file nor the configured devices use. */
    private static String freeName(final List<Link> links, final List<RxeDeviceConfig> configured) {
        final Set<String> used = new TreeSet<>();
        links.forEach(l -> used.add(l.name()));
        configured.forEach(c -> used.add(c.name()));
        for (int i = 0; ; i++) {
            if (!used.contains("rxe" + i)) {
                return "rxe" + i;
            }
        }
    }

    private static String interfaces() {
        try {
            final List<String> names = new ArrayList<>();
            for (final NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                names.add(n.getName());
            }
            Collections.sort(names);
            return "this network namespace has " + String.join(", ", names);
        } catch (final SocketException e) {
            return "the interfaces cannot be listed: " + e.getMessage();
        }
    }

    /** Writes a temporary file beside the target and renames it over, so a reader never sees half a file. */
    private void write(final List<Link> links) {
        final StringBuilder sb = new StringBuilder("# rxe devices on network interfaces: NAME netdev IFACE"
                + " (hwlab link add/delete)\n");
        for (final Link l : links) {
            sb.append(l.name()).append(" netdev ").append(l.netdev()).append('\n');
        }
        try {
            final Path dir = file.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            final Path tmp = Files.createTempFile(dir, ".rxe-links", ".tmp");
            Files.writeString(tmp, sb, StandardCharsets.UTF_8);
            try {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (final AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (final IOException e) {
            throw new IllegalStateException("cannot write the rxe link file " + file + ": " + e.getMessage(), e);
        }
    }
}
