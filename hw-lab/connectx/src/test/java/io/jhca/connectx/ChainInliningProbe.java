package io.jhca.connectx;

/**
 * The child JVM of {@link ChainCompiledApartTest}, run with {@code -XX:+PrintInlining}: postSend chains
 * ({@link DataPathRounds#postChain}) until the JIT has compiled the loop that calls postSend, then writes the outcome of
 * the mlx5 provider's request to keep the chain loop apart into the file named by its argument (not to stdout, where
 * the JIT's report may break into the line).
 */
final class ChainInliningProbe {
    private ChainInliningProbe() {
    }

    public static void main(String[] args) throws Exception {
        try (DataPathRounds rounds = new DataPathRounds("inlining", "127.0.0.56")) {
            for (int k = 0; k < 20; k++) {
                postChains(rounds, 20_000);
            }
        }
        java.nio.file.Files.writeString(java.nio.file.Path.of(args[0]), io.jhca.mlx5.Mlx5Provider.chainCompiledApart());
    }

    /** An application's posting loop, which the JIT compiles with postSend inlined. */
    private static void postChains(DataPathRounds rounds, int n) {
        for (int i = 0; i < n; i++) {
            rounds.postChain(i);
        }
    }
}
