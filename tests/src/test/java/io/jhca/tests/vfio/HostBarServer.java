package io.jhca.tests.vfio;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.agrona.concurrent.UnsafeBuffer;

import static io.jhca.tests.vfio.guest.IvshmemChecks.ACK;
import static io.jhca.tests.vfio.guest.IvshmemChecks.COPY;
import static io.jhca.tests.vfio.guest.IvshmemChecks.GUEST_WORD;
import static io.jhca.tests.vfio.guest.IvshmemChecks.HOST_WORD;
import static io.jhca.tests.vfio.guest.IvshmemChecks.REQUEST;
import static io.jhca.tests.vfio.guest.IvshmemChecks.REQUEST_GPA;
import static io.jhca.tests.vfio.guest.IvshmemChecks.REQUEST_LENGTH;

/**
 * The host side of IvshmemChecks, standing where a device model will: it owns ivshmem's memory file (the guest's
 * BAR2) and reads and writes the guest's RAM file by guest-physical address, polling the BAR for requests as a
 * model must (stores into shared memory cannot be trapped).
 */
final class HostBarServer implements AutoCloseable {

    static final long BAR_SIZE = 32 << 20;
    private static final int MAX_LENGTH = 4096;

    private final Path barFile;
    private final Path ramFile;
    private final FileChannel barChannel;
    private final UnsafeBuffer bar;
    private final Thread thread;
    private volatile boolean stop;
    private volatile String error;
    private volatile int served;

    /** Creates the BAR file (32 MiB) with {@code hostWord} at offset 0; the RAM file is QEMU's to create. */
    HostBarServer(final Path barFile, final Path ramFile, final long hostWord) throws IOException {
        this.barFile = barFile;
        this.ramFile = ramFile;
        barChannel = FileChannel.open(barFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        barChannel.truncate(BAR_SIZE);
        barChannel.write(ByteBuffer.allocate(1), BAR_SIZE - 1);
        MappedByteBuffer mapped = barChannel.map(FileChannel.MapMode.READ_WRITE, 0, 2 * MAX_LENGTH + COPY);
        bar = new UnsafeBuffer(mapped);
        bar.putLongVolatile(HOST_WORD, hostWord);
        thread = new Thread(this::serve, "host-bar-server");
        thread.setDaemon(true);
        thread.start();
    }

    private void serve() {
        try {
            while (!stop) {
                if (bar.getLongVolatile(REQUEST) == 1 && bar.getLongVolatile(ACK) == 0) {
                    answer(bar.getLongVolatile(REQUEST_GPA), bar.getLongVolatile(REQUEST_LENGTH));
                }
                Thread.sleep(20);
            }
        } catch (IOException | RuntimeException e) {
            error = e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Copies {@code length} bytes at {@code gpa} of guest RAM into the BAR, writes their inverse after them. */
    private void answer(final long gpa, final long length) throws IOException {
        if (length <= 0 || length > MAX_LENGTH || gpa < 0) {
            throw new IllegalStateException("request for " + length + " bytes at GPA 0x" + Long.toHexString(gpa));
        }
        try (FileChannel ram = FileChannel.open(ramFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (gpa + 2 * length > ram.size()) {
                throw new IllegalStateException("GPA 0x" + Long.toHexString(gpa) + " + " + 2 * length
                        + " beyond the RAM file's " + ram.size() + " bytes");
            }
            ByteBuffer bytes = ByteBuffer.allocate((int) length);
            while (bytes.hasRemaining() && ram.read(bytes, gpa + bytes.position()) > 0) {
                // positional reads until the buffer is full
            }
            bytes.flip();
            ByteBuffer inverse = ByteBuffer.allocate((int) length);
            for (int i = 0; i < length; i++) {
                bar.putByte(COPY + i, bytes.get(i));
                inverse.put(i, (byte) ~bytes.get(i));
            }
            while (inverse.hasRemaining()) {
                ram.write(inverse, gpa + length + inverse.position());
            }
        }
        served++;
        bar.putLongVolatile(ACK, 1); // after the data: the guest polls this word
    }

    /** The word the guest wrote at BAR2 0x08. */
    long guestWord() {
        return bar.getLongVolatile(GUEST_WORD);
    }

    int served() {
        return served;
    }

    /** What went wrong on the server thread, or null. */
    String error() {
        return error;
    }

    @Override
    public void close() throws IOException {
        stop = true;
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        barChannel.close();
        Files.deleteIfExists(barFile);
        Files.deleteIfExists(ramFile);
    }
}
