package io.jhca.tests.vfio.guest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import jnr.ffi.LibraryLoader;

/**
 * Runs in the vfio guest (scripts/vfio-vm run-java) and needs nothing of jhca: lists the PCI functions the
 * guest kernel sees and opens the VFIO container, so that a test can check the harness itself.
 *
 * <p>Output, one fact a line (parsed by VfioVmTest):
 * <pre>
 * pci 0000:00:01.0 1234:11e8 class=00ff00 driver=vfio-pci group=1 group-members=1 group-dev=/dev/vfio/1
 * vfio api=0 type1v2=1
 * </pre>
 * Exit status 0 when /dev/vfio/vfio opened and answered, 1 otherwise.
 */
public final class ListPci {

    /** ioctl(2) with an integer argument, bound with jnr-ffi. */
    public interface Ioctl {
        int ioctl(int fd, long request, long arg);

        int open(String path, int flags);

        int close(int fd);
    }

    // linux/vfio.h: VFIO_TYPE (';') << 8 | VFIO_BASE (100) + n, no size or direction bits
    private static final long VFIO_GET_API_VERSION = 0x3B64;
    private static final long VFIO_CHECK_EXTENSION = 0x3B65;
    private static final long VFIO_TYPE1v2_IOMMU = 3;
    private static final int O_RDWR = 2;

    private ListPci() {
    }

    public static void main(final String[] args) throws IOException {
        System.exit(print() ? 0 : 1);
    }

    /** Prints the listing; false when /dev/vfio/vfio did not open. */
    static boolean print() throws IOException {
        Path devices = Path.of("/sys/bus/pci/devices");
        List<Path> functions = new ArrayList<>();
        try (Stream<Path> s = Files.list(devices)) {
            s.sorted().forEach(functions::add);
        }
        for (Path d : functions) {
            String group = linkName(d.resolve("iommu_group"));
            int members = 0;
            if (!group.equals("-")) {
                try (Stream<Path> s = Files.list(d.resolve("iommu_group/devices"))) {
                    members = (int) s.count();
                }
            }
            String groupDev = Path.of("/dev/vfio", group).toString();
            System.out.printf("pci %s %s:%s class=%s driver=%s group=%s group-members=%d group-dev=%s%n",
                    d.getFileName(), hex(d.resolve("vendor")), hex(d.resolve("device")), hex(d.resolve("class")),
                    linkName(d.resolve("driver")), group, members,
                    Files.exists(Path.of(groupDev)) ? groupDev : "-");
        }
        Ioctl libc = LibraryLoader.create(Ioctl.class).load("c");
        int fd = libc.open("/dev/vfio/vfio", O_RDWR);
        if (fd < 0) {
            System.out.println("vfio cannot open /dev/vfio/vfio");
            return false;
        }
        try {
            System.out.printf("vfio api=%d type1v2=%d%n", libc.ioctl(fd, VFIO_GET_API_VERSION, 0),
                    libc.ioctl(fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU));
        } finally {
            libc.close(fd);
        }
        return true;
    }

    private static String hex(final Path file) throws IOException {
        return Files.readString(file, StandardCharsets.US_ASCII).trim().replaceFirst("^0x", "");
    }

    private static String linkName(final Path link) throws IOException {
        return Files.isSymbolicLink(link) ? Files.readSymbolicLink(link).getFileName().toString() : "-";
    }
}
