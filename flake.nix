# Nix entry points mirroring the Makefile: a dev shell with Python 3.11 and
# make, and a check that runs `make test` (the Makefile bootstraps .venv).
{
  description = "Modelplane: an open control plane for AI model serving";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = [ pkgs.python311 pkgs.gnumake pkgs.git ];
          shellHook = ''
            export PY=${pkgs.python311}/bin/python3
          '';
        };
      });

      # `make test` installs the Python dependencies from PyPI into .venv, so
      # the check needs network access: run it with `nix flake check
      # --option sandbox relaxed` (or `nix develop -c make test`).
      checks = forAll (pkgs: {
        test = pkgs.runCommand "modelplane-test"
          {
            src = self;
            nativeBuildInputs = [ pkgs.python311 pkgs.gnumake pkgs.cacert ];
            __noChroot = true;
            SSL_CERT_FILE = "${pkgs.cacert}/etc/ssl/certs/ca-bundle.crt";
          } ''
          cp -r $src src && chmod -R u+w src && cd src
          export HOME=$TMPDIR
          make test PY=${pkgs.python311}/bin/python3
          touch $out
        '';
      });
    };
}
