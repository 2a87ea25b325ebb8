import Foundation
import Testing

/// The README's recipes that need no camera, run as written (Tests/readme/recipes.py): each
/// exits 0 and every file it names plays. They record in real time, so they run in the
/// serialized group. The camera recipes run in the VM (VividTests).
@Suite(.serialized, .timeLimit(.minutes(10))) struct ReadmeRecipeTests {
    @Test(.timeLimit(.minutes(5)))
    func theReadmesFileRecipesRunAsWritten() throws {
        try Env.requireFFmpegTools()
        let runner = Env.repoRoot.appendingPathComponent("Tests/readme/recipes.py").path
        let r = try run("/usr/bin/env", ["python3", runner, "--dualcam", Env.dualcam, "--kind", "files"])
        #expect(r.status == 0 && r.stdout.contains("recipes: 9 of 9 files recipes ran as written"), "\(r.stdout)\(r.stderr)")
    }
}
