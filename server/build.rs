// askama embeds the templates at build time: rebuild when they change.
fn main() {
    println!("cargo:rerun-if-changed=../templates");
}
