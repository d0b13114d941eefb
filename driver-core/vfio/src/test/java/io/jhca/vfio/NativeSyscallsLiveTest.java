package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The libc binding on this machine's kernel: the calls the VFIO layer makes, on a plain file, and errno. */
class NativeSyscallsLiveTest {

    private final Syscalls sys = Syscalls.linux();

    @Test
    void openPwritePreadMmapAndClose(@TempDir final Path dir) throws Exception {
        final Path file = Files.write(dir.resolve("f"), new byte[8192]);
        final int fd = sys.open(file.toString(), O_RDWR | O_CLOEXEC);
        assertTrue(fd >= 0, "open: errno " + sys.errno());
        try {
            final NativeStruct s = new NativeStruct(8);
            s.buffer.putInt(0, 0x12345678);
            assertEquals(4, sys.pwrite(fd, s.address(), 4, 0x100));
            s.buffer.putInt(0, 0);
            assertEquals(4, sys.pread(fd, s.address(), 4, 0x100));
            assertEquals(0x12345678, s.buffer.getInt(0));
            final long a = sys.mmap(4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            assertNotEquals(-1L, a, "mmap: errno " + sys.errno());
            assertEquals(0x12345678, new UnsafeBuffer(a, 4096).getInt(0x100), "the mapping shows the file");
            assertEquals(0, sys.munmap(a, 4096));
            assertEquals(4, sys.pwrite(fd, s.address(), 4, 0x1000 + 8));
            final long second = sys.mmap(4096, PROT_READ, MAP_SHARED, fd, 0x1000);
            assertNotEquals(-1L, second, "mmap at an offset: errno " + sys.errno());
            assertEquals(0x12345678, new UnsafeBuffer(second, 4096).getInt(8), "the offset reached the kernel");
            assertEquals(0, sys.munmap(second, 4096));
            // FIONREAD (asm-generic/ioctls.h 0x541B) writes an int through the pointer: the struct argument arrives
            final NativeStruct n = new NativeStruct(4);
            assertEquals(0, sys.ioctl(fd, 0x541B, n.address()));
            assertEquals(8192, n.buffer.getInt(0));
            assertEquals(-1, sys.ioctl(fd, VFIO_GET_API_VERSION, 0), "a VFIO ioctl on a plain file");
            assertEquals(Errno.ENOTTY, sys.errno());
        } finally {
            assertEquals(0, sys.close(fd));
        }
        assertEquals(-1, sys.close(fd));
        assertEquals(Errno.EBADF, sys.errno());
        assertEquals(-1, sys.open(dir.resolve("missing").toString(), O_RDWR));
        assertEquals(Errno.ENOENT, sys.errno());
    }

    /** Here (no IOMMU, no /dev/vfio) opening the container is a clear refusal; in a VM with vfio it opens. */
    @Test
    void theRealContainerOpensOrSaysWhy() {
        if (Files.exists(Path.of("/dev/vfio/vfio"))) {
            try (VfioContainer c = VfioContainer.open()) {
                assertEquals(0, c.apiVersion());
            } catch (final VfioException e) {
                assertTrue(e.getMessage().startsWith("container: "), e.getMessage());
            }
            return;
        }
        final VfioException e = assertThrows(VfioException.class, VfioContainer::open);
        assertEquals("container: open /dev/vfio/vfio failed: ENOENT (No such file or directory): the vfio module is not"
            + " loaded (modprobe vfio-pci)", e.getMessage());
        assertEquals(Errno.ENOENT, e.errno());
    }
}
