from foilbench.cli.main import main

if __name__ == "__main__":
    main(fast_exit=True)
