package io.jhca.lab;

import java.io.IOException;

/**
 * Where perftest's exchange messages travel: a TCP socket ({@link OobLink}), or with -R SENDs on a QP of its own
 * that rdma_cm connected ({@link CmCommLink}, perftest_communication.c rdma_write_data / rdma_read_data).
 */
interface PerftestWire {
    /** Sends one message whole. */
    void write(byte[] msg) throws IOException;

    /** Receives the next message, {@code n} bytes. */
    byte[] read(int n) throws IOException;

    void close() throws IOException;
}
