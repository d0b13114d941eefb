package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How the provider reads HotSpot's directive stack ({@code Compiler.directives_print}) before adding its own: only a
 * stack of the default directive alone is taken as free of the application's directives. Whether the JIT then
 * keeps the chain loop apart is ChainCompiledApartTest's (hw-lab/connectx), in child JVMs.
 */
@Timeout(10)
class CompiledApartTest {

    private static final String DEFAULT = "\nDirective: (default)\n matching: *.*\n c1 directives:\n  inline: -\n";
    private static final String OWN = "\nDirective:\n matching: java/lang/String.hashCode\n c1 directives:\n"
            + "  inline: +java/lang/String.isLatin1\n";

    @Test
    void theDefaultAloneIsFree() {
        assertTrue(CompiledApart.onlyDefault(DEFAULT));
    }

    @Test
    void anyOtherDirectiveIsTheApplications() {
        assertFalse(CompiledApart.onlyDefault(OWN + DEFAULT));
        assertFalse(CompiledApart.onlyDefault(OWN));
    }

    @Test
    void nothingPrintedIsNotFree() {
        assertFalse(CompiledApart.onlyDefault(""));
        assertFalse(CompiledApart.onlyDefault("null"));
    }

    @Test
    void theDirectiveNamesTheChainLoop() {
        assertTrue(CompiledApart.DIRECTIVE.contains("inline: \"-io/jhca/mlx5/Mlx5Qp.driverPostCommonChain\""));
        assertTrue(CompiledApart.DIRECTIVE.contains("match: \"*.*\""));
    }
}
