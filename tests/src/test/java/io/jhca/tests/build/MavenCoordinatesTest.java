package io.jhca.tests.build;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's "Using jhca from Maven" against the build: every coordinate it shows is a module of the parent pom
 * with the parent's group and version, the modules it says each provider brings are what the poms make it bring
 * (compile and runtime dependencies, followed transitively), and the example consumer project depends on exactly
 * the README's rxe coordinates.
 */
class MavenCoordinatesTest {
    private static final Path ROOT = Path.of("..");
    private static final String SECTION = "## Using jhca from Maven";

    record Coordinate(String groupId, String artifactId, String version, String scope) {
    }

    @Test
    void readmeCoordinatesAreModulesOfTheBuild() throws Exception {
        Element parent = pom(ROOT.resolve("pom.xml"));
        String group = text(parent, "groupId");
        String version = text(parent, "version");
        Map<String, Element> modules = modules(parent);
        List<Coordinate> shown = readmeDependencies();
        assertEquals(List.of("jhca-rxe-provider", "jhca-mlx5-provider", "jhca-connectx"),
                shown.stream().map(Coordinate::artifactId).toList(), "the README's dependency blocks");
        for (Coordinate c : shown) {
            assertEquals(group, c.groupId(), c.toString());
            assertEquals(version, c.version(), c.toString());
            assertTrue(modules.containsKey(c.artifactId()), c.artifactId() + " is no module of the build: "
                    + modules.keySet());
        }
        assertEquals("runtime", shown.get(2).scope(), "the ConnectX model is a run-time dependency");
    }

    @Test
    void eachProviderBringsWhatTheReadmeSays() throws Exception {
        Map<String, Element> modules = modules(pom(ROOT.resolve("pom.xml")));
        String readme = section();
        Set<String> rxe = closure(modules, "jhca-rxe-provider");
        assertEquals(Set.of("jhca-driver-core", "jhca-memory"), rxe, "what jhca-rxe-provider brings");
        Set<String> mlx5 = closure(modules, "jhca-mlx5-provider");
        assertEquals(Set.of("jhca-driver-core", "jhca-doorbell", "jhca-vfio", "jhca-memory"), mlx5,
                "what jhca-mlx5-provider brings");
        for (String m : rxe) {
            assertTrue(readme.contains("`" + m + "`"), "the README names " + m);
        }
        for (String m : mlx5) {
            assertTrue(readme.contains("`" + m + "`"), "the README names " + m);
        }
        assertFalse(rxe.contains("jhca-mlx5-provider") || rxe.contains("jhca-vfio"), "rxe alone needs no mlx5");
    }

    @Test
    void theExampleConsumerUsesTheReadmeCoordinates() throws Exception {
        Element consumer = pom(ROOT.resolve("tests/src/test/resources/maven-consumer/pom.xml"));
        List<Coordinate> deps = dependencies(consumer);
        assertEquals(List.of(readmeDependencies().get(0)), deps, "the consumer's dependencies");
    }

    // ------------------------------------------------------------------------------------------------ reading

    private static String section() throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        int start = readme.indexOf("\n" + SECTION + "\n");
        assertTrue(start >= 0, "README.md has no section '" + SECTION + "'");
        int end = readme.indexOf("\n## ", start + SECTION.length() + 2);
        return readme.substring(start, end < 0 ? readme.length() : end);
    }

    private static List<Coordinate> readmeDependencies() throws Exception {
        List<Coordinate> out = new ArrayList<>();
        Matcher m = Pattern.compile("```xml\\n(.*?)```", Pattern.DOTALL).matcher(section());
        while (m.find()) {
            Element dep = parse(m.group(1));
            out.add(coordinate(dep));
        }
        return out;
    }

    private static Coordinate coordinate(Element dep) {
        String scope = text(dep, "scope");
        return new Coordinate(text(dep, "groupId"), text(dep, "artifactId"), text(dep, "version"),
                scope == null ? "compile" : scope);
    }

    /** The module artifactIds of the parent pom, each with its pom. */
    private static Map<String, Element> modules(Element parent) throws Exception {
        Map<String, Element> out = new HashMap<>();
        for (Element m : children(child(parent, "modules"), "module")) {
            Element pom = pom(ROOT.resolve(m.getTextContent().trim()).resolve("pom.xml"));
            out.put(text(pom, "artifactId"), pom);
        }
        return out;
    }

    /** Every io.jhca module {@code artifactId} brings to a consumer: compile and runtime scope, transitively. */
    private static Set<String> closure(Map<String, Element> modules, String artifactId) {
        Set<String> seen = new TreeSet<>();
        Deque<String> todo = new ArrayDeque<>(List.of(artifactId));
        while (!todo.isEmpty()) {
            Element pom = modules.get(todo.pop());
            for (Element d : children(child(pom, "dependencies"), "dependency")) {
                String scope = text(d, "scope");
                boolean passedOn = scope == null || scope.equals("compile") || scope.equals("runtime");
                String a = text(d, "artifactId");
                if (passedOn && "io.jhca".equals(text(d, "groupId")) && text(d, "type") == null && seen.add(a)) {
                    todo.push(a);
                }
            }
        }
        return seen;
    }

    private static List<Coordinate> dependencies(Element pom) {
        List<Coordinate> out = new ArrayList<>();
        for (Element d : children(child(pom, "dependencies"), "dependency")) {
            out.add(coordinate(d));
        }
        return out;
    }

    private static Element pom(Path file) throws Exception {
        return parse(Files.readString(file));
    }

    private static Element parse(String xml) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setExpandEntityReferences(false);
        Document doc = f.newDocumentBuilder().parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        return doc.getDocumentElement();
    }

    private static Element child(Element e, String name) {
        for (Element c : children(e, name)) {
            return c;
        }
        return null;
    }

    private static List<Element> children(Element e, String name) {
        List<Element> out = new ArrayList<>();
        if (e == null) {
            return out;
        }
        NodeList nl = e.getChildNodes();
        for (int i = 0; i < nl.getLength(); i++) {
            Node n = nl.item(i);
            if (n instanceof Element c && c.getTagName().equals(name)) {
                out.add(c);
            }
        }
        return out;
    }

    private static String text(Element e, String name) {
        Element c = child(e, name);
        return c == null ? null : c.getTextContent().trim();
    }
}
